"""One project's big runs cannot take another project's room in Redis: a project's live
streams share PROJECT_LIVE_MAX_BYTES. On a Redis with a small maxmemory (noeviction,
as shipped), project 1 runs six large runs one after another (no gateway here to
shrink their ended streams, the worst case: they stay counted): the first four keep
full live streams, then its runs are pressed — their deltas stay out of the live
stream and it keeps its newest LIVE_STREAM_PRESSED_BYTES — while every stored event of
every run reaches the ingest stream. Project 2's large run afterwards keeps its full
live stream, deltas included, and nothing was refused for memory. Before the bounds,
project 1's runs filled the 12 MB and project 2's run failed (events_lost). The Redis
here has 14 MB: what it holds at the peak (the ingest stream of seven large runs, the
live streams, the allocator's own) came within a few hundred KB of 12 MB on some
machines, and a write past maxmemory is refused (OOM) even when the runner's retry
then gets it through."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from runner import protocol
from tests.redis_kit import PrivateRedis
from tests.runner_process.runner_kit import stream_events
from tests.runner_process.test_runner_live_bounds import run_large, stored_events


@pytest.fixture
def small_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path, maxmemory="14mb").start()
    yield server
    server.stop()


def memory(server: PrivateRedis, run_id: str) -> int:
    with server.client() as client:
        return int(client.memory_usage(protocol.run_stream(run_id), samples=0) or 0)


def last_delta(client: redis.Redis, run_id: str) -> int:
    return max(e["delta_index"] for e in stream_events(client, run_id)
               if e["type"] == "node.delta")


@pytest.mark.allow_output  # the worker logs each run's end
def test_one_projects_big_runs_leave_another_projects_live_stream_alone(
        small_redis: PrivateRedis) -> None:
    heavy = [run_large(small_redis, project_id=1) for _ in range(6)]
    other, outcome = run_large(small_redis, project_id=2)
    assert [outcome for _run, outcome in heavy] == ["completed"] * 6
    assert outcome == "completed"
    client = small_redis.client()
    for run_id, _ in [*heavy, (other, outcome)]:  # the stored events are all there
        stored = stored_events(client, run_id)
        assert [e["seq"] for e in stored] == list(range(len(stored))) and len(stored) > 5
        assert stored[-1]["type"] == "run.completed"
    full, pressed = heavy[:4], heavy[4:]
    for run_id, _ in full:  # the newest of its ~13,000 deltas
        assert memory(small_redis, run_id) > protocol.LIVE_STREAM_MAX_BYTES // 2
        assert last_delta(client, run_id) > 12_000
    for run_id, _ in pressed:  # pressed early: its later deltas never reached Redis
        assert memory(small_redis, run_id) <= protocol.LIVE_STREAM_PRESSED_BYTES
        assert stream_events(client, run_id)[-1]["type"] == "run.completed"
        assert last_delta(client, run_id) < 1_000
    account: Any = client.hgetall(protocol.live_bytes_key(1))
    held = sum(int(value.split(b":")[0]) for value in account.values())
    assert held <= protocol.PROJECT_LIVE_MAX_BYTES
    # The other project: its full bound, its newest deltas, its own account.
    assert memory(small_redis, other) > protocol.LIVE_STREAM_MAX_BYTES // 2
    events = stream_events(client, other)
    assert sum(e["type"] == "node.delta" for e in events) > 1000
    assert last_delta(client, other) > 12_000
    assert list(client.hgetall(protocol.live_bytes_key(2))) == [other.encode()]
    assert "errorstat_OOM" not in client.info("errorstats")  # nothing refused for memory
