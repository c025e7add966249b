"""Once a run's end is stored, its live stream no longer holds the run: its deltas and
the copies of its stored events are gone, only its last entry (the ending) stays, for
a minute instead of an hour, and the run leaves its project's live-bytes account. So
whether the ingester stored the runner's ending or the reaper wrote its own."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import redis
from django.utils import timezone

from kionga.redis_client import sync_redis
from runner import protocol
from runs import ingest_stream, reaper
from runs.models import Run
from tests.ingest_helpers import AT, COMPLETE, drain, events, make_run, send, status
from tests.redis_kit import PrivateRedis

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def stream(settings: Any, private_redis: PrivateRedis) -> Iterator[redis.Redis]:
    """The gateway's Redis, of this test's own: no other session's ingester drains it."""
    settings.REDIS_URL = private_redis.url
    sync_redis.cache_clear()
    client = sync_redis()
    ingest_stream.ensure_group(client)
    yield client
    sync_redis.cache_clear()


def _delta(seq: int, index: int) -> dict[str, Any]:
    return {"seq": seq, "type": "node.delta", "at": AT, "node_id": "model", "attempt": 1,
            "delta": "word ", "delta_index": index}


def _write_live(client: redis.Redis, run: Run, sent: list[dict[str, Any]]) -> str:
    """The run's live stream as its runner writes it: every event, deltas between,
    an hour's TTL, and the run's bytes in its project's account."""
    live = protocol.run_stream(str(run.pk))
    for event in sent:
        client.xadd(live, {"e": protocol.encode_event(event)})
        if event["type"] == "node.started":
            for index in range(200):
                client.xadd(live, {"e": protocol.encode_event(_delta(event["seq"], index))})
    client.expire(live, protocol.STREAM_TTL_SECONDS)
    client.hset(protocol.live_bytes_key(run.project_id), str(run.pk), "100000:9999999999")
    return live


def _live_types(client: redis.Redis, live: str) -> list[str]:
    entries: Any = client.xrange(live)
    return [json.loads(fields[b"e"])["type"] for _id, fields in entries]


def test_the_stored_ending_leaves_only_the_ending_for_a_minute(
        alice: Any, acme: Any, stream: redis.Redis) -> None:
    run = make_run(alice, acme)
    sent = events(*COMPLETE)
    live = _write_live(stream, run, sent)
    assert stream.xlen(live) == len(sent) + 200
    send(stream, run, sent)
    drain(stream)
    assert status(run) == "completed"
    assert _live_types(stream, live) == ["run.completed"]
    assert 0 < stream.ttl(live) <= protocol.ENDED_STREAM_TTL_SECONDS
    assert stream.hget(protocol.live_bytes_key(acme.pk), str(run.pk)) is None


def test_the_reapers_ending_leaves_only_itself_for_a_minute(
        alice: Any, acme: Any, stream: redis.Redis) -> None:
    run = make_run(alice, acme, status="running")
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(seconds=30))
    live = _write_live(stream, run, events("run.started", "node.started"))
    assert reaper.reap(stream, [str(run.pk)]) == 1
    assert status(run) == "failed"
    assert _live_types(stream, live) == ["run.failed"]
    assert 0 < stream.ttl(live) <= protocol.ENDED_STREAM_TTL_SECONDS
    assert stream.hget(protocol.live_bytes_key(acme.pk), str(run.pk)) is None
