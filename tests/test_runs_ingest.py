"""The ingester stores every event exactly once and in order, and applies it to its run."""

from datetime import timedelta
from typing import Any

import pytest
import redis
from django.utils import timezone

from approvals.models import ApprovalRequest
from kionga.models import AuditEvent
from runner import protocol
from runs import ingest
from runs.credentials import find_active_run, issue_credential
from runs.models import Run, RunEvent
from tests.designs_helpers import make_design

pytestmark = pytest.mark.django_db(transaction=True)


def _run(alice: Any, acme: Any) -> Run:
    design = make_design(alice, acme)
    return Run.objects.create(project=acme, design=design, revision=1, content_sha256="x" * 64,
                              created_by=alice)


def _entries(run: Run, events: list[dict[str, Any]]) -> list[ingest.Entry]:
    return [(f"{i}-0".encode(), {b"run": str(run.pk).encode(),
                                  b"e": protocol.encode_event(e).encode()})
            for i, e in enumerate(events, 1)]


def _events() -> list[dict[str, Any]]:
    at = "2026-11-30T10:00:00.000+00:00"
    return [
        {"seq": 0, "type": "run.started", "at": at},
        {"seq": 1, "type": "node.started", "at": at, "node_id": "input"},
        {"seq": 2, "type": "run.completed", "at": at, "output": "done",
         "usage": {"tokens": 7}},
    ]


def test_it_stores_each_event_once(alice: Any, acme: Any) -> None:
    run = _run(alice, acme)
    entries = _entries(run, _events())
    ingest.store_entries(entries[:2])
    ingest.store_entries(entries[:2])  # redelivered
    assert list(RunEvent.objects.filter(run=run).values_list("seq", flat=True)) == [0, 1]
    run.refresh_from_db()
    assert run.status == "running" and run.started_at is not None


def test_it_finishes_the_run(alice: Any, acme: Any) -> None:
    run = _run(alice, acme)
    credential = issue_credential(run)
    ingest.store_entries(_entries(run, _events()))
    run.refresh_from_db()
    assert (run.status, run.output, run.tokens) == ("completed", "done", 7)
    assert find_active_run(credential) is None
    assert AuditEvent.objects.filter(action="run.finished", target_id=str(run.pk)).exists()


def test_it_drops_events_after_the_end(alice: Any, acme: Any) -> None:
    run = _run(alice, acme)
    ingest.store_entries(_entries(run, _events()))
    late = {"seq": 3, "type": "node.completed", "at": "2026-11-30T10:00:01+00:00"}
    ingest.store_entries(_entries(run, [late]))
    assert RunEvent.objects.filter(run=run).count() == 3


def test_it_cancels_pending_approvals_when_a_run_is_cancelled(alice: Any, acme: Any) -> None:
    run = _run(alice, acme)
    approval = ApprovalRequest.objects.create(project=acme, run=run, node_id="ok",
                                              expires_at=timezone.now() + timedelta(minutes=1))
    cancelled = {"seq": 0, "type": "run.cancelled", "at": "2026-11-30T10:00:00+00:00"}
    ingest.store_entries(_entries(run, [cancelled]))
    approval.refresh_from_db()
    assert approval.status == "cancelled"
    assert AuditEvent.objects.filter(action="run.cancelled", target_id=str(run.pk)).exists()


def test_it_drains_the_shared_stream(alice: Any, acme: Any) -> None:
    client = redis.Redis.from_url("redis://127.0.0.1:6379/0")
    run = _run(alice, acme)
    ingest.ensure_group(client)
    for event in _events():
        client.xadd(protocol.INGEST_STREAM, {"run": str(run.pk),
                                             "e": protocol.encode_event(event)})
    consumer = ingest.consumer_name()
    while ingest.drain_once(client, consumer, block_ms=50):
        pass
    assert RunEvent.objects.filter(run=run).count() == 3
    pending = client.xpending(protocol.INGEST_STREAM, protocol.INGEST_GROUP)
    assert pending["pending"] == 0
