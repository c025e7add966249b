"""A reader of a run's event stream gets every stored event, once and in order, whatever
the live stream still holds: after the run ended (its live stream trimmed to the
ending, or expired) everything comes from PostgreSQL; a reader that was already
following when the stream was trimmed takes what it skipped from PostgreSQL, waiting
for the ingester that has not stored it yet; and a stored event too large for the live
stream (there as its seq only) is read from PostgreSQL in full."""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from typing import Any

import pytest
import redis
from django.db import connection

from kionga.redis_client import sync_redis
from runner import protocol
from runs.event_keys import live_fields
from runs.models import Run, RunEvent
from runs.sse import opening, run_event_stream
from tests.ingest_helpers import AT, make_run
from tests.test_runs_stream_end import bodies

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def live_redis() -> redis.Redis:
    """The Redis the gateway reads live streams from (each test's run has its own)."""
    return sync_redis()

KINDS = ("run.started", "node.started", "node.completed", "node.started", "node.completed",
         "run.completed")


def _events() -> list[dict[str, Any]]:
    return [{"seq": seq, "type": kind, "at": AT, "big": "x" * 100 * seq}
            for seq, kind in enumerate(KINDS)]


def _store(run: Run, sent: list[dict[str, Any]]) -> None:
    RunEvent.objects.bulk_create([RunEvent(run=run, seq=e["seq"], type=e["type"], data=e)
                                  for e in sent])


def _frames(answer: list[tuple[bytes, bool]]) -> list[dict[str, Any]]:
    body = b"".join(chunk for chunk, _more in answer).decode()
    return [json.loads(data) for data in re.findall(r"^data: (.*)$", body, re.MULTILINE)]


def _live(client: redis.Redis, run: Run, *entries: dict[bytes, bytes]) -> str:
    live = protocol.run_stream(str(run.pk))
    for fields in entries:
        client.xadd(live, fields)  # type: ignore[arg-type]
    client.expire(live, 60)
    return live


def _entry(run: Any, event: dict[str, Any]) -> dict[bytes, bytes]:
    """A live entry as the runner writes it (with the run's MAC)."""
    return live_fields(str(run if isinstance(run, str) else run.pk),
                       protocol.encode_event(event).encode())


@pytest.mark.parametrize("live_stream", ["trimmed", "expired"])
@pytest.mark.parametrize("after", [-1, 2])
def test_a_late_reader_gets_every_stored_event_after_its_resume_point(
        alice: Any, acme: Any, live_redis: redis.Redis, live_stream: str, after: int) -> None:
    run = make_run(alice, acme, status="completed")
    sent = _events()
    _store(run, sent)
    live = _live(live_redis, run, _entry(run, sent[-1])) if live_stream == "trimmed" else None
    try:
        answer = bodies(run_event_stream(str(run.pk), after, opening(run, after)))
    finally:
        if live:
            live_redis.delete(live)
    assert _frames(answer) == sent[after + 1:]
    assert not answer[-1][1]  # the answer ended


def test_a_reader_following_when_the_stream_was_trimmed_waits_for_the_stored_log(
        alice: Any, acme: Any, live_redis: redis.Redis) -> None:
    run = make_run(alice, acme, status="running")
    sent = _events()
    _store(run, sent[:2])
    start = opening(run, -1)  # the reader opened here: two events stored, run active
    # The run went on and ended; its live stream holds the ending only, and the
    # ingester stores the rest a moment later.
    live = _live(live_redis, run, _entry(run, sent[-1]))

    def ingester_catches_up() -> None:
        time.sleep(0.5)
        _store(run, sent[2:])
        connection.close()

    late = threading.Thread(target=ingester_catches_up)
    late.start()
    try:
        answer = bodies(run_event_stream(str(run.pk), -1, start))
    finally:
        late.join()
        live_redis.delete(live)
    assert _frames(answer) == sent


def test_a_stored_event_too_large_for_the_live_stream_comes_from_the_stored_log(
        alice: Any, acme: Any, live_redis: redis.Redis) -> None:
    run = make_run(alice, acme, status="running")
    sent = _events()
    _store(run, sent)
    stub = live_fields(str(run.pk), json.dumps({"seq": 2, "type": "node.completed"}).encode(),
                       stored_only=True)
    delta = {"seq": 2, "type": "node.delta", "at": AT, "node_id": "m", "attempt": 1,
             "delta": "hi", "delta_index": 0}
    live = _live(live_redis, run, *[_entry(run, e) for e in sent[:2]], stub, _entry(run, delta),
                 *[_entry(run, e) for e in sent[3:]])
    try:
        answer = bodies(run_event_stream(str(run.pk), -1, (False, [])))
    finally:
        live_redis.delete(live)
    assert _frames(answer) == [*sent[:3], delta, *sent[3:]]


@pytest.mark.allow_output  # the drop is logged (asserted below)
def test_an_unknown_live_entry_is_skipped(live_redis: redis.Redis,
                                          caplog: pytest.LogCaptureFixture) -> None:
    run_id = str(uuid.uuid4())
    live = protocol.run_stream(run_id)
    live_redis.xadd(live, {"other": "x"})
    ending = {"seq": 0, "type": "run.cancelled", "at": AT, "reason": "cancelled"}
    live_redis.xadd(live, _entry(run_id, ending))  # type: ignore[arg-type]
    try:
        answer = bodies(run_event_stream(run_id, -1, (False, [])))
    finally:
        live_redis.delete(live)
    assert _frames(answer) == [ending]
    assert "dropped live entry" in caplog.text  # it has no MAC: logged
