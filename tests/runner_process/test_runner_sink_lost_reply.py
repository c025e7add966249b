"""A batch whose EXEC applied but whose reply was lost (the connection dropped right
after) is not sent again: the run's live stream holds each event once, and none of
its oldest entries is pushed out by the repeat's exact MAXLEN."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
import redis

from runner import protocol
from runner import sink as sink_module
from runner.protocol import now_iso
from runner.sink import EventSink, sink_client
from tests.redis_kit import PrivateRedis
from tests.runner_process.runner_kit import EVENT_KEY, stream_events


def losing_replies(monkeypatch: pytest.MonkeyPatch, losses: int) -> None:
    """The sink's first `losses` transactions apply in Redis but answer with a dropped
    connection, as when Redis restarts right after EXEC."""
    apply = sink_module.transaction
    left = [losses]

    def applied_then_lost(client: redis.Redis, commands: list[Any]) -> list[Any]:
        answers = apply(client, commands)
        if left[0] > 0:
            left[0] -= 1
            raise redis.ConnectionError("connection lost after EXEC")
        return answers

    monkeypatch.setattr(sink_module, "transaction", applied_then_lost)


def started(seq: int) -> dict[str, Any]:
    return {"seq": seq, "type": "node.started", "at": now_iso(), "node_id": f"n{seq}"}


@pytest.mark.allow_output  # the retry is logged on purpose
@pytest.mark.parametrize("losses", [1, 3])
def test_a_batch_whose_reply_was_lost_is_written_once(
        private_redis: PrivateRedis, losses: int, monkeypatch: pytest.MonkeyPatch) -> None:
    run_id = str(uuid.uuid4())
    client = private_redis.client()
    losing_replies(monkeypatch, losses)
    sink = EventSink(sink_client(private_redis.url), run_id, event_key=EVENT_KEY,
                     project_id=1)
    sent = [started(seq) for seq in range(10)]
    sent.append({"seq": 10, "type": "run.completed", "at": now_iso(), "output": "x",
                 "usage": {"tokens": 1}})
    for event in sent:
        sink(event)
    assert sink.close(30)
    assert stream_events(client, run_id) == sent
    assert sink.slot_freed
    entries: Any = client.xrange(protocol.INGEST_STREAM)
    ingested = [fields for _id, fields in entries if fields[b"run"].decode() == run_id]
    assert len(ingested) == len(sent)
