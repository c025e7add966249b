"""A Redis restart in the middle of a run: the run goes on and loses no event.

The worker and its broker use a private redis-server (append-only, fsync always),
killed while the run waits on a resource call and started again a moment later.
A batch whose EXEC applied but whose reply was lost is sent again (runner/sink.py):
readers dedupe on seq, so the test reads as they do and checks a repeat is the same
event.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import redis

from runner import protocol
from tests.runner_process.runner_kit import (
    RedisServer,
    Worker,
    client_app,
    ingest_events,
    knowledge_graph,
    payload,
    read_run,
    send,
    slow_gateway,
    stream_events,
)


def by_seq(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events as a reader keeps them: the first of each seq (a repeat is identical)."""
    kept: dict[int, dict[str, Any]] = {}
    for event in events:
        assert kept.setdefault(event["seq"], event) == event
    return list(kept.values())


@pytest.mark.allow_output  # redis-py may warn about the dropped connection
def test_it_loses_no_event_when_redis_restarts_mid_run(tmp_path: Path) -> None:
    server = RedisServer(tmp_path)
    server.start()
    client = redis.Redis.from_url(server.url)
    worker = Worker(tmp_path / "worker.log", REDIS_URL=server.url)
    app = client_app(server.url)
    try:
        worker.wait_ready()
        with slow_gateway(delay=4) as (url, _seen):
            run_id = send(app, client, payload(knowledge_graph(), callback_url=url))
            read_run(client, run_id, until=lambda e: e.get("node_id") == "search")
            server.kill()
            time.sleep(1.5)  # shorter than the running lease: the run keeps its slot
            server.start()
            events = by_seq(read_run(client, run_id, seconds=20))
        assert events[-1]["type"] == "run.completed", events
        assert [e["seq"] for e in events] == list(range(len(events)))
        assert by_seq(ingest_events(client, run_id)) == by_seq(stream_events(client, run_id))
        assert by_seq(stream_events(client, run_id)) == events
        assert not protocol.slot_alive(client, run_id)
    finally:
        app.close()
        worker.stop()
        client.close()
        server.kill()
