"""kill -9 mid-run: nobody renews the run's lease any more, so it runs out in time.

The gateway's reaper then ends the run with `runner_lost` (runs/reaper.py). Each
test kills a worker of its own, never the session's.
"""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from celery import Celery

from runner import protocol
from tests.runner_process.runner_kit import (
    SESSION_QUEUE,
    Worker,
    knowledge_graph,
    mock_graph,
    payload,
    read_run,
    send,
    slow_gateway,
    wait_for,
)


@pytest.fixture
def doomed(tmp_path: Path, rds: redis.Redis) -> Iterator[Worker]:
    worker = Worker(tmp_path / "doomed.log", "--concurrency", "2",
                    queue=f"{SESSION_QUEUE}-doomed-{uuid.uuid4().hex[:8]}")
    try:
        worker.wait_ready()
        yield worker
    finally:
        worker.stop()


def start_slow_run(worker: Worker, rds: redis.Redis, app: Celery, url: str) -> str:
    run_id = send(app, rds, payload(knowledge_graph(), callback_url=url), queue=worker.queue)
    read_run(rds, run_id, until=lambda e: e.get("node_id") == "search")
    # Running: the queued lease (30 s) was replaced by the running one.
    assert protocol.slot_alive(rds, run_id)
    return run_id


def alive(pid: int) -> bool:
    """Running, not a zombie waiting for init to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in {"Z", "X"}


def assert_lease_runs_out(rds: redis.Redis, run_id: str) -> None:
    killed = time.monotonic()
    assert wait_for(lambda: not protocol.slot_alive(rds, run_id),
                    protocol.RUNNING_LEASE_SECONDS + 1, step=0.2)
    assert time.monotonic() - killed <= protocol.RUNNING_LEASE_SECONDS + 1
    # Once dead it stays dead: a late renewal cannot revive it.
    lease: Any = rds.hget(protocol.LEASES_KEY, run_id)
    assert not protocol.renew_lease(rds, lease.decode())
    assert not protocol.slot_alive(rds, run_id)
    protocol.release_slot(rds, run_id)


def test_it_stops_renewing_when_the_worker_is_killed(doomed: Worker, rds: redis.Redis,
                                                     celery_client: Celery) -> None:
    with slow_gateway(delay=60) as (url, _seen):
        run_id = start_slow_run(doomed, rds, celery_client, url)
        children = doomed.children()
        doomed.kill9()
        assert_lease_runs_out(rds, run_id)
    # The pool's children died with it (PR_SET_PDEATHSIG): no orphan renews leases.
    assert children and not any(alive(pid) for pid in children)


def test_it_stops_renewing_when_a_pool_process_is_killed(doomed: Worker, rds: redis.Redis,
                                                          celery_client: Celery) -> None:
    with slow_gateway(delay=60) as (url, _seen):
        run_id = start_slow_run(doomed, rds, celery_client, url)
        for pid in doomed.children():
            os.kill(pid, signal.SIGKILL)
        assert_lease_runs_out(rds, run_id)
    # The worker replaced its processes and runs the next task.
    assert doomed.proc.poll() is None
    events = read_run(rds, send(celery_client, rds, payload(mock_graph()), queue=doomed.queue),
                      seconds=20)
    assert events[-1]["type"] == "run.completed"
