"""A writer serves the sinks with work in one round trip (runner.sink._serve_together,
a MULTI/EXEC each: runner.redis_tx.transactions): every run's events still arrive
once, whole and in order, also when that round trip's reply is lost after it applied
or one run's transaction is refused while the others pass."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import redis

from runner import protocol, redis_tx
from runner import sink as sink_module
from runner.protocol import now_iso
from runner.sink import EventSink, sink_client
from tests.runner_process.runner_kit import EVENT_KEY, REDIS_URL, stream_events

RUNS = 12


def started(seq: int) -> dict[str, Any]:
    return {"seq": seq, "type": "node.started", "at": now_iso(), "node_id": f"n{seq}"}


def ending(seq: int) -> dict[str, Any]:
    return {"seq": seq, "type": "run.completed", "at": now_iso(), "output": "x",
            "usage": {"tokens": 1}}


def held_sinks(client: redis.Redis, count: int) -> list[EventSink]:
    """Sinks with events buffered but not handed to the writers yet (one turn serves
    them all, as a writer does with the sinks queued at once)."""
    sinks = []
    for _ in range(count):
        sink = EventSink(client, str(uuid.uuid4()), event_key=EVENT_KEY, project_id=1)
        sink._scheduled = True  # held here: the test's turn, not a writer's
        for seq in range(4):
            sink(started(seq))
        sink(ending(4))
        sinks.append(sink)
    return sinks


def sent() -> list[dict[str, Any]]:
    return [*(started(seq) for seq in range(4)), ending(4)]


def same(events: list[dict[str, Any]]) -> list[tuple[int, str]]:
    return [(e["seq"], e["type"]) for e in events]


def test_one_turn_writes_every_sinks_batch_in_one_round_trip(
        rds: redis.Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    trips: list[int] = []
    together = redis_tx.transactions

    def counted(client: redis.Redis, bodies: list[Any]) -> Any:
        trips.append(len(bodies))
        return together(client, bodies)

    monkeypatch.setattr(sink_module, "transactions", counted)
    sinks = held_sinks(sink_client(REDIS_URL), RUNS)
    sink_module._serve_together(sinks)
    assert trips == [RUNS]
    for sink in sinks:
        assert sink.close(10)
        assert same(stream_events(rds, sink._run_id)) == same(sent())
        assert sink.slot_freed


@pytest.mark.allow_output  # the retries are logged on purpose
def test_a_lost_reply_of_the_round_trip_writes_each_batch_once(
        rds: redis.Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    together = redis_tx.transactions

    def applied_then_lost(client: redis.Redis, bodies: list[Any]) -> Any:
        together(client, bodies)
        raise redis.ConnectionError("connection lost after the EXECs")

    monkeypatch.setattr(sink_module, "transactions", applied_then_lost)
    sinks = held_sinks(sink_client(REDIS_URL), RUNS)
    sink_module._serve_together(sinks)
    for sink in sinks:
        assert sink.close(10)
        assert same(stream_events(rds, sink._run_id)) == same(sent())
    ingested: Any = rds.xrange(protocol.INGEST_STREAM)
    runs = [f[b"run"].decode() for _id, f in ingested]
    assert [runs.count(sink._run_id) for sink in sinks] == [len(sent())] * RUNS


@pytest.mark.allow_output  # the refused batch is logged on purpose
def test_one_refused_transaction_does_not_fail_the_others(rds: redis.Redis) -> None:
    sinks = held_sinks(sink_client(REDIS_URL), 3)
    broken = sinks[1]
    rds.set(protocol.run_stream(broken._run_id), "not a stream")  # WRONGTYPE in its EXEC
    try:
        sink_module._serve_together(sinks)
        for sink in (sinks[0], sinks[2]):
            assert sink.close(10)
            assert same(stream_events(rds, sink._run_id)) == same(sent())
        assert broken.close(0.5) is False or broken.error is not None
        assert broken.error is not None
    finally:
        rds.delete(protocol.run_stream(broken._run_id))
