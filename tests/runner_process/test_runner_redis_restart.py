"""A Redis restart in the middle of a run: the run goes on and loses no event.

The worker and its broker use a private redis-server (append-only, fsync always),
killed while the run waits on a resource call and started again a moment later.
"""

from __future__ import annotations

import time
from pathlib import Path

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
            events = read_run(client, run_id, seconds=20)
        assert events[-1]["type"] == "run.completed", events
        assert [e["seq"] for e in events] == list(range(len(events)))
        assert ingest_events(client, run_id) == stream_events(client, run_id) == events
        assert client.zscore(protocol.SLOTS_KEY, run_id) is None
    finally:
        app.close()
        worker.stop()
        client.close()
        server.kill()
