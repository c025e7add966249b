"""Node records reach PostgreSQL only from the run's own runner: a record entry needs the
MAC of the run's event key (and a record's MAC never passes for an event's), is stored
once, never fails the run when it cannot be stored, and goes when its run is pruned."""

from datetime import timedelta
from typing import Any

import pytest
import redis
from django.utils import timezone

from runner import protocol
from runs.event_keys import event_key
from runs.models import NodeRecord, Run
from runs.prune import prune_runs
from tests.ingest_helpers import dead_letters, drain, events, make_run, send, seqs

pytestmark = pytest.mark.django_db(transaction=True)


def record(node_id: str = "m1", attempt: int = 1, **extra: Any) -> dict[str, Any]:
    return {"node_id": node_id, "attempt": attempt, "kind": "model", "status": "completed",
            "inputs": [], "output": {"port": "out", "type": "text", "value": "hi",
                                     "truncated": False, "redacted": False},
            "error": None, "started_at": "2026-01-01T00:00:00+00:00",
            "ended_at": "2026-01-01T00:00:01+00:00", "duration_ms": 1000,
            "usage": {"tokens": 7, "cost": 0.01}, "reused_from": None, **extra}


def send_record(stream: redis.Redis, run: Run, data: dict[str, Any] | bytes,
                key: bytes | None = None) -> None:
    encoded = data if isinstance(data, bytes) else protocol.encode_event(data).encode()
    run_id = str(run.pk)
    stream.xadd(protocol.INGEST_STREAM,
                protocol.record_fields(key or event_key(run_id), run_id, encoded))


def test_it_stores_a_runs_record_once(alice: Any, acme: Any, stream: redis.Redis) -> None:
    run = make_run(alice, acme)
    send(stream, run, events("run.started"))
    send_record(stream, run, record())
    send_record(stream, run, record())  # redelivered
    send_record(stream, run, record(attempt=2, status="failed", output=None))
    drain(stream)
    stored = list(NodeRecord.objects.filter(run=run).order_by("attempt"))
    assert [(r.node_id, r.attempt, r.status, r.tokens, r.duration_ms) for r in stored] == [
        ("m1", 1, "completed", 7, 1000), ("m1", 2, "failed", 7, 1000)]
    assert stored[0].data == record()
    assert seqs(run) == [0]  # records are not events
    assert dead_letters(stream) == []


@pytest.mark.allow_output  # the refused entries are logged
def test_it_refuses_a_record_forged_for_another_run(alice: Any, acme: Any, mallory: Any,
                                                    evil: Any, stream: redis.Redis) -> None:
    victim, own = make_run(alice, acme), make_run(mallory, evil)
    # Mallory's runner holds her run's key, never alice's.
    send_record(stream, victim, record(), key=event_key(str(own.pk)))
    # An event's MAC does not make a record authentic, nor the reverse.
    encoded = protocol.encode_event(record()).encode()
    stream.xadd(protocol.INGEST_STREAM, {
        "run": str(victim.pk), protocol.RECORD_FIELD: encoded,
        "mac": protocol.event_mac(event_key(str(victim.pk)), str(victim.pk), encoded)})
    event = protocol.encode_event(events("run.started")[0]).encode()
    stream.xadd(protocol.INGEST_STREAM, {
        "run": str(victim.pk), "e": event, "mac": protocol.record_fields(
            event_key(str(victim.pk)), str(victim.pk), event)["mac"]})
    drain(stream)
    assert not NodeRecord.objects.exists() and seqs(victim) == []
    assert [letter[b"reason"] for letter in dead_letters(stream)] == [b"bad_mac"] * 3


@pytest.mark.allow_output
def test_a_record_that_cannot_be_stored_leaves_its_run_alone(
        alice: Any, acme: Any, stream: redis.Redis) -> None:
    run = make_run(alice, acme)
    send(stream, run, events("run.started", "node.started"))
    send_record(stream, run, b"not json")
    send_record(stream, run, record(attempt=0))
    send_record(stream, run, record(node_id="x" * 65))
    send_record(stream, run, record(extra="\u0000"))  # PostgreSQL refuses U+0000
    send_record(stream, run, record(node_id="ok"))
    drain(stream)
    run.refresh_from_db()
    assert run.status == "running" and seqs(run) == [0, 1]
    assert list(NodeRecord.objects.values_list("node_id", flat=True)) == ["ok"]
    assert [letter[b"reason"] for letter in dead_letters(stream)] == [
        b"invalid_json", b"not_a_record", b"not_a_record", b"refused_by_database"]


def test_records_go_when_their_run_is_pruned(alice: Any, acme: Any,
                                             stream: redis.Redis) -> None:
    old, new = make_run(alice, acme, status="completed"), make_run(alice, acme)
    for run in (old, new):
        send_record(stream, run, record())
    drain(stream)
    Run.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=400))
    assert prune_runs(days=30) == 1
    assert list(NodeRecord.objects.values_list("run_id", flat=True)) == [new.pk]
