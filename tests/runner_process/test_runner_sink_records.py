"""EventSink.record: node records go to the ingest stream only, in order with the run's
events (before its ending), with the run's record MAC; none after the ending."""

from __future__ import annotations

import json
import uuid
from typing import Any

import redis

from runner import protocol
from runner.protocol import now_iso
from runner.sink import EventSink, sink_client
from tests.runner_process.runner_kit import REDIS_URL

KEY = b"k" * 32


def event(seq: int, type_: str, **fields: Any) -> dict[str, Any]:
    return {"seq": seq, "type": type_, "at": now_iso(), **fields}


def test_records_reach_the_ingest_stream_only_and_before_the_ending(rds: redis.Redis) -> None:
    run_id = str(uuid.uuid4())
    sink = EventSink(sink_client(REDIS_URL), run_id, event_key=KEY)
    sink(event(0, "run.started"))
    sink.record({"node_id": "a", "attempt": 1})
    sink(event(1, "node.completed", node_id="a"))
    sink.record({"node_id": "b", "attempt": 1})
    sink(event(2, "run.completed", output="x", usage={"tokens": 0}))
    sink.record({"node_id": "late", "attempt": 1})  # after the ending: dropped
    assert sink.close(5)
    entries: Any = rds.xrange(protocol.INGEST_STREAM)
    mine = [f for _id, f in entries if f[b"run"].decode() == run_id]
    field = protocol.RECORD_FIELD.encode()
    kinds = [json.loads(f[field])["node_id"] if field in f else json.loads(f[b"e"])["type"]
             for f in mine]
    assert kinds == ["run.started", "a", "node.completed", "b", "run.completed"]
    for fields in mine:
        if field in fields:
            assert protocol.record_mac_valid(KEY, run_id, fields[field], fields[b"mac"])
            assert not protocol.event_mac_valid(KEY, run_id, fields[field], fields[b"mac"])
    live: Any = rds.xrange(protocol.run_stream(run_id))
    assert len(live) == 3  # the three events, no record
