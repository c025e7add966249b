"""A run's live stream is bounded in bytes: a large run (a long input the mock model
streams back word by word, thousands of deltas) never holds more than
LIVE_STREAM_MAX_BYTES of Redis memory in its live stream, however many deltas it
writes; the stream keeps its newest entries (the ending last) and every stored event
still reaches the ingest stream. A stored event too large for the live stream is there
as its seq and type only (readers take it from the stored log)."""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

import pytest
import redis

from runner import protocol, task_signature, worker
from runner.protocol import now_iso
from runner.settings import load_settings
from runner.sink import EventSink, sink_client
from tests.redis_kit import PrivateRedis
from tests.runner_process.runner_kit import (
    EVENT_KEY,
    TOKEN,
    mock_graph,
    payload,
    slot_for,
    stream_events,
)

# ~117,000 characters: the mock model streams them back as ~13,000 deltas (its text is
# cut at 64 KiB), ~2.6 MB of live stream before streams were bounded.
LARGE_INPUT = " ".join(f"w{i % 1000}" for i in range(24_000))


def run_large(server: PrivateRedis, project_id: int = 1) -> tuple[str, str]:
    """One large run through runner.worker.execute on `server`; (run_id, outcome)."""
    client = sink_client(server.url)
    body = payload(mock_graph(), text=LARGE_INPUT)
    body["project_id"] = project_id
    assert slot_for(client, body)
    settings = load_settings({"KIONGA_DESIGNER_RUNNER_TOKEN": TOKEN, "REDIS_URL": server.url})
    outcome = worker.execute(body, task_signature.sign(body, TOKEN), settings=settings,
                             client=client)
    return body["run_id"], outcome


def stored_events(client: redis.Redis, run_id: str) -> list[dict[str, Any]]:
    entries: Any = client.xrange(protocol.INGEST_STREAM)
    return [json.loads(f[b"e"]) for _id, f in entries if f[b"run"] == run_id.encode()
            and b"e" in f]  # not the run's node records


@pytest.mark.allow_output  # the worker logs the run's end
def test_a_large_runs_live_stream_never_exceeds_its_bound(private_redis: PrivateRedis) -> None:
    client = private_redis.client()
    sizes: list[int] = []
    done = threading.Event()

    def sample() -> None:  # the stream's memory while the run writes it
        while not done.wait(0.005):
            for stream in client.scan_iter("kionga:run:*:events"):
                sizes.append(int(client.memory_usage(stream, samples=0) or 0))

    sampler = threading.Thread(target=sample)
    sampler.start()
    try:
        run_id, outcome = run_large(private_redis)
    finally:
        done.set()
        sampler.join()
    stream = protocol.run_stream(run_id)
    sizes.append(int(client.memory_usage(stream, samples=0) or 0))
    assert outcome == "completed"
    assert len(sizes) > 10 and max(sizes) <= protocol.LIVE_STREAM_MAX_BYTES, max(sizes)
    assert max(sizes) > protocol.LIVE_STREAM_MAX_BYTES // 2  # it was filled, not pressed
    events = stream_events(client, run_id)
    assert events[-1]["type"] == "run.completed"
    assert sum(e["type"] == "node.delta" for e in events) > 1000  # the newest deltas stay
    stored = stored_events(client, run_id)
    assert [e["seq"] for e in stored] == list(range(len(stored)))
    assert stored[-1]["type"] == "run.completed"
    assert 0 < client.ttl(stream) <= protocol.STREAM_TTL_SECONDS


def test_a_stored_event_larger_than_the_bound_is_live_as_its_seq_only(
        private_redis: PrivateRedis) -> None:
    client = private_redis.client()
    run_id = str(uuid.uuid4())
    sink = EventSink(sink_client(private_redis.url), run_id, event_key=EVENT_KEY, project_id=1)
    huge = {"seq": 1, "type": "node.completed", "at": now_iso(), "node_id": "model",
            "text": "x" * protocol.LIVE_STREAM_MAX_BYTES}
    sent = [{"seq": 0, "type": "run.started", "at": now_iso()}, huge,
            {"seq": 2, "type": "run.completed", "at": now_iso(), "output": "x",
             "usage": {"tokens": 1}}]
    for event in sent:
        sink(event)
    assert sink.close(10)
    entries: Any = client.xrange(protocol.run_stream(run_id))
    assert [set(fields) for _id, fields in entries] == [
        {b"e", b"mac"}, {b"s", b"mac"}, {b"e", b"mac"}]  # each with the run's MAC
    assert json.loads(entries[1][1][b"s"]) == {"seq": 1, "type": "node.completed"}
    assert stored_events(client, run_id) == sent  # the stored log gets it whole
    stream = protocol.run_stream(run_id)
    assert int(client.memory_usage(stream, samples=0) or 0) <= protocol.LIVE_STREAM_MAX_BYTES
