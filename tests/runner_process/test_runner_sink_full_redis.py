"""A full Redis (maxmemory reached, noeviction: every MULTI refused with OOM, nothing
applied) is waited out like an unreachable one: the sink keeps the run's events in
order and writes them all once memory is back (the gateway storing and trimming frees
it), instead of failing the run with events_lost."""

from __future__ import annotations

import time
import uuid
from typing import Any

import pytest

from runner import protocol
from runner.protocol import now_iso
from runner.sink import EventSink, sink_client
from tests.redis_kit import PrivateRedis
from tests.runner_process.runner_kit import EVENT_KEY, stream_events
from tests.runner_process.test_runner_live_bounds import stored_events


@pytest.mark.allow_output  # the retries are logged on purpose
def test_the_sink_waits_out_a_full_redis_and_loses_nothing(
        private_redis: PrivateRedis, caplog: pytest.LogCaptureFixture) -> None:
    run_id = str(uuid.uuid4())
    client = private_redis.client()
    private_redis.fill()
    sink = EventSink(sink_client(private_redis.url), run_id, event_key=EVENT_KEY, project_id=1)
    sent: list[dict[str, Any]] = [
        {"seq": seq, "type": "node.started", "at": now_iso(), "node_id": f"n{seq}"}
        for seq in range(20)]
    sent.append({"seq": 20, "type": "run.completed", "at": now_iso(), "output": "x",
                 "usage": {"tokens": 1}})
    for event in sent:
        sink(event)
    time.sleep(1.0)
    assert client.exists(protocol.run_stream(run_id)) == 0  # nothing applied while full
    assert not sink.failed and sink.error is None
    private_redis.free()
    assert sink.close(30)
    assert stream_events(client, run_id) == sent
    assert stored_events(client, run_id) == sent
    assert "Redis unreachable (OutOfMemoryError), retrying" in caplog.text
