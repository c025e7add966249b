"""EventSink: events reach both streams in order, and a Redis restart loses none."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from runner import protocol
from runner.protocol import now_iso
from runner.sink import EventSink, SinkFailed, sink_client
from tests.runner_process.runner_kit import REDIS_URL, RedisServer, free_port, wait_for

KEY = b"k" * 32


def event(seq: int, type_: str = "node.started", **fields: Any) -> dict[str, Any]:
    return {"seq": seq, "type": type_, "at": now_iso(), **fields}


def read(client: redis.Redis, stream: str, run_id: str | None = None) -> list[dict[str, Any]]:
    entries: Any = client.xrange(stream)
    return [json.loads(f[b"e"]) for _id, f in entries
            if run_id is None or f[b"run"].decode() == run_id]


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path)
    server.start()
    yield server
    server.kill()


def test_it_writes_stored_events_to_both_streams_and_deltas_to_one(rds: redis.Redis) -> None:
    run_id = str(uuid.uuid4())
    sink = EventSink(sink_client(REDIS_URL), run_id, event_key=KEY)
    sent = [event(0, "run.started"), event(0, "node.delta", node_id="m", attempt=1, delta="hi",
                                           delta_index=0),
            event(1, "run.completed", output="x", usage={"tokens": 1})]
    for item in sent:
        sink(item)
    sink(event(2, "node.started"))  # after the terminal event: dropped
    assert sink.close(5)
    assert read(rds, protocol.run_stream(run_id)) == sent
    assert read(rds, protocol.INGEST_STREAM, run_id) == [sent[0], sent[2]]
    assert rds.ttl(protocol.run_stream(run_id)) > 0
    assert (sink.last_seq, sink.terminal_seen) == (1, True)


def test_it_authenticates_each_entry_with_the_run_key(rds: redis.Redis) -> None:
    run_id = str(uuid.uuid4())
    sink = EventSink(sink_client(REDIS_URL), run_id, event_key=KEY)
    for seq in range(3):
        sink(event(seq))
    sink(event(2, "node.delta", node_id="m", attempt=1, delta="d", delta_index=0))
    assert sink.close(5)
    entries: Any = rds.xrange(protocol.INGEST_STREAM)
    mine = [f for _id, f in entries if f[b"run"] == run_id.encode()]
    live: Any = rds.xrange(protocol.run_stream(run_id))
    assert (len(mine), len(live)) == (3, 4)
    for fields in [*mine, *(f for _id, f in live)]:
        assert protocol.event_mac_valid(KEY, run_id, fields[b"e"], fields[b"mac"])
        assert not protocol.event_mac_valid(b"x" * 32, run_id, fields[b"e"], fields[b"mac"])
        assert not protocol.event_mac_valid(KEY, str(uuid.uuid4()), fields[b"e"], fields[b"mac"])


@pytest.mark.allow_output  # the retries are logged on purpose
def test_it_loses_no_event_across_a_redis_restart(private_redis: RedisServer,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    run_id = str(uuid.uuid4())
    client = sink_client(private_redis.url)
    sink = EventSink(client, run_id, event_key=KEY)
    for seq in range(5):
        sink(event(seq))
    stream = protocol.run_stream(run_id)
    assert wait_for(lambda: client.xlen(stream) == 5, 5)
    private_redis.kill()
    for seq in range(5, 50):  # emitted while Redis is down: buffered, in order
        sink(event(seq))
        if seq % 10 == 0:
            sink(event(seq, "node.delta", node_id="m", attempt=1, delta="d", delta_index=seq))
    sink(event(50, "run.completed", output="done", usage={"tokens": 0}))
    time.sleep(1.0)
    private_redis.start()
    assert sink.close(30)
    events = read(client, stream)
    assert [(e["seq"], e["type"]) for e in events if e["type"] != "node.delta"] == [
        (seq, "node.started") for seq in range(50)] + [(50, "run.completed")]
    assert [e["delta_index"] for e in events if e["type"] == "node.delta"] == [10, 20, 30, 40]
    assert [e["seq"] for e in read(client, protocol.INGEST_STREAM)] == list(range(51))
    assert "Redis unreachable (ConnectionError), retrying" in caplog.text


@pytest.mark.allow_output  # giving up is logged on purpose
def test_it_gives_up_when_redis_stays_away(caplog: pytest.LogCaptureFixture) -> None:
    sink = EventSink(sink_client(f"redis://127.0.0.1:{free_port()}/0"), "r1", event_key=KEY,
                     retry_seconds=0.3)
    sink(event(0, "run.started"))
    assert not sink.close(5)
    assert sink.failed and sink.dropped == 1
    with pytest.raises(SinkFailed):  # nothing is buffered once it gave up: the run stops
        sink(event(1))
    assert sink.dropped == 2
    assert "giving up on its events" in caplog.text


def test_the_terminal_event_frees_the_run_slot_with_it(rds: redis.Redis) -> None:
    """Whoever sees a run end may start the next one at once: its slot is freed in the
    same transaction as the ending, not by a later call."""
    run_id, lease = str(uuid.uuid4()), protocol.new_lease_token()
    assert protocol.acquire_slot(rds, run_id, 8, token=lease) == protocol.SLOT_TAKEN
    sink = EventSink(sink_client(REDIS_URL), run_id, event_key=KEY, lease=lease)
    sink(event(0, "run.started"))
    assert wait_for(lambda: len(read(rds, protocol.run_stream(run_id))) == 1, 5)
    assert protocol.slot_alive(rds, run_id)
    assert not sink.slot_freed
    sink(event(1, "run.completed", output="x", usage={"tokens": 1}))
    assert sink.close(5)
    assert not protocol.slot_alive(rds, run_id)
    assert sink.slot_freed
