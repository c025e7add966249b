"""Events that cannot be written end the run truly (run.failed, events_lost) and stop
the graph; text PostgreSQL or redis-py would refuse never reaches the sink at all.

With the real sink against Redis: before, a lone surrogate (`{"a":"x\\ud800y"}`
through an extract node) killed the sink's writer thread, so every event was lost,
the run was taken for runner_lost, and the graph went on with its side effects.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import redis

from contracts.normalize import normalize
from runner import protocol, sink, task_signature, worker
from runner.backends.mock import MockBackend
from runner.engine import run_graph_sync
from runner.inmemory_resources import InMemoryResources
from runner.request import RunRequest
from runner.settings import RunnerSettings
from runner.sink import EventSink
from tests.runner_process.runner_kit import (
    EVENT_KEY,
    TOKEN,
    ingest_events,
    payload,
    slot_for,
    stream_events,
)

LONG = " ".join(f"w{i}" for i in range(200))


def chain(*middle: dict[str, Any]) -> dict[str, Any]:
    nodes = [{"id": "input", "kind": "input"}, *middle, {"id": "output", "kind": "output"}]
    ids = [n["id"] for n in nodes]
    edges = [{"from": a, "to": b} for a, b in zip(ids, ids[1:], strict=False)]
    return normalize({"schema_version": 2, "name": "t", "nodes": nodes, "edges": edges}).graph


@pytest.mark.allow_output  # the worker logs the run's end
def test_it_runs_a_lone_surrogate_through_extract_to_a_stored_end(
        runner_settings: RunnerSettings, sink_redis: redis.Redis) -> None:
    body = payload(chain({"id": "x", "kind": "extract", "config": {"path": "a"}}),
                   text='{"a":"x\\ud800y"}')
    assert slot_for(sink_redis, body)
    assert worker.execute(body, task_signature.sign(body, TOKEN), settings=runner_settings,
                          client=sink_redis) == "completed"
    events = stream_events(sink_redis, body["run_id"])
    assert events[-1]["type"] == "run.completed"
    assert events[-1]["output"] == '"x\ufffdy"'  # the JSON text of the extracted string
    assert [e["seq"] for e in ingest_events(sink_redis, body["run_id"])] == list(range(len(events)))


def failing_encoder(node_id: str) -> Any:
    """protocol.encode_event, except that node_id's completion cannot be encoded."""
    def encode(event: dict[str, Any]) -> str:
        if event.get("type") == "node.completed" and event.get("node_id") == node_id:
            raise TypeError("cannot encode")
        return protocol.encode_event(event)

    return encode


@pytest.mark.allow_output  # the failed batch is logged on purpose
def test_it_fails_the_run_and_stops_the_graph_when_a_batch_cannot_be_written(
        sink_redis: redis.Redis, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(sink, "encode_event", failing_encoder("boom"))
    run_id = str(uuid.uuid4())
    events = EventSink(sink_redis, run_id, event_key=EVENT_KEY)
    resources = InMemoryResources(functions={"record": {"ok": True}})
    # The model streams for ~10 s unless stopped; the tool after it has side effects.
    graph = chain({"id": "boom", "kind": "prompt", "config": {"template": "{input}"}},
                  {"id": "m", "kind": "model"},
                  {"id": "t", "kind": "tool", "config": {"tool": "record"}})
    result = run_graph_sync(RunRequest(graph=graph, input=LONG, allow_side_effects=True),
                            resources=resources, emit=events, backend=MockBackend(delay=0.05))
    assert not events.close(10)
    assert (result.status, result.reason) == ("failed", "events_lost")
    assert resources.calls == []  # the tool never ran
    stored = ingest_events(sink_redis, run_id)
    assert [e["seq"] for e in stored] == list(range(len(stored)))  # no gap, no duplicate
    assert stored[-1]["type"] == "run.failed"
    assert stored[-1]["reason"] == "events_lost"
    assert stored[-1]["error"] == {"code": "node_error", "message": "the runner could not write "
                                   "the run's events (TypeError); the run was stopped"}
    assert not [e for e in stored if e.get("node_id") == "t"]
    assert stream_events(sink_redis, run_id)[-1] == stored[-1]
    assert "its events could not be written" in caplog.text


@pytest.mark.allow_output  # the failed batch is logged on purpose
def test_it_rewrites_an_unwritable_ending_into_a_true_failure(
        sink_redis: redis.Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    def encode(event: dict[str, Any]) -> str:
        if event.get("type") == "run.completed":
            raise ValueError("cannot encode")
        return protocol.encode_event(event)

    monkeypatch.setattr(sink, "encode_event", encode)
    run_id = str(uuid.uuid4())
    events = EventSink(sink_redis, run_id, event_key=EVENT_KEY)
    result = run_graph_sync(RunRequest(graph=chain(), input="x"),
                            resources=InMemoryResources(), emit=events)
    assert result.status == "completed"  # the engine finished before the writer failed
    assert not events.close(10)
    stored = ingest_events(sink_redis, run_id)
    assert [(e["seq"], e["type"]) for e in stored][-1] == (len(stored) - 1, "run.failed")
    assert stored[-1]["reason"] == "events_lost"
