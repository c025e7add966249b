"""One runner process hosts many waiting runs at once (runner.host): 200 runs, each
waiting on a slow resource answered by a real HTTP peer on loopback, all in flight
together in a single pool process, none refused, all completed; a cancel still stops
one mid-wait; a killed pool process ends its runs (their leases run out: runner_lost)."""

from __future__ import annotations

import os
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
import redis
from celery import Celery

from runner import protocol
from tests.loopback import QuietHandler
from tests.runner_process.runner_kit import (
    SESSION_QUEUE,
    TERMINAL,
    Worker,
    knowledge_graph,
    lease_of,
    payload,
    read_run,
    send,
    stream_events,
    wait_for,
)

RUNS = 200
WAIT_SECONDS = 10.0
MAX_RUNS = 1000  # the runner's default


class SlowPeer:
    """A loopback 'internal listener' whose knowledge search answers after `delay` s,
    counting the calls it holds at once."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.open = 0
        self.most = 0
        self.calls = 0
        self._lock = threading.Lock()
        peer = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                self.read_body()
                with peer._lock:
                    peer.open += 1
                    peer.calls += 1
                    peer.most = max(peer.most, peer.open)
                time.sleep(peer.delay)
                with peer._lock:
                    peer.open -= 1
                self.answer(200, {"documents": [{"text": "found it"}]})

        class Server(ThreadingHTTPServer):
            request_queue_size = 1024  # every run connects at once
            daemon_threads = True

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/api/v1"
        threading.Thread(target=self.server.serve_forever, args=(0.01,), daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def peer() -> Iterator[SlowPeer]:
    server = SlowPeer(WAIT_SECONDS)
    yield server
    server.close()


@pytest.fixture
def one_process(tmp_path: Path, rds: redis.Redis) -> Iterator[Worker]:
    """A worker of its own with one pool process (its own queue: tests kill it)."""
    worker = Worker(tmp_path / "one.log", queue=f"{SESSION_QUEUE}-one-{uuid.uuid4().hex[:8]}",
                    KIONGA_DESIGNER_MAX_RUNS=str(MAX_RUNS), KIONGA_RUNNER_PROCESSES="1")
    try:
        worker.wait_ready()
        yield worker
    finally:
        worker.stop()


def start_runs(worker: Worker, rds: redis.Redis, app: Celery, url: str,
               count: int) -> list[str]:
    """Take each run's slot as the gateway does (none refused), then send its task."""
    runs = []
    for _ in range(count):
        body = payload(knowledge_graph(), callback_url=url)
        taken = protocol.acquire_slot(rds, body["run_id"], MAX_RUNS, token=lease_of(body))
        assert taken == protocol.SLOT_TAKEN
        runs.append(send(app, rds, body, take_slot=False, queue=worker.queue))
    return runs


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def test_one_process_holds_200_waiting_runs_at_once(one_process: Worker, peer: SlowPeer,
                                                     rds: redis.Redis,
                                                     celery_client: Celery) -> None:
    [child] = one_process.children()
    idle = rss_mb(child)
    started = time.monotonic()
    runs = start_runs(one_process, rds, celery_client, peer.url, RUNS)
    assert wait_for(lambda: peer.open >= RUNS, 30, step=0.1), f"{peer.open} calls open"
    held = rss_mb(child)
    ends = [read_run(rds, run_id, seconds=60)[-1] for run_id in runs]
    took = time.monotonic() - started
    assert [e["type"] for e in ends] == ["run.completed"] * RUNS
    assert peer.most >= RUNS and peer.calls == RUNS
    # All waited together: about one wait, not RUNS of them one process at a time.
    assert took < WAIT_SECONDS + 20
    assert one_process.children() == [child]  # the same single process did it all
    # Memory, not a process each (~65 MB a run when a pool process was a run).
    assert (held - idle) / RUNS < 1.0, f"{idle:.0f} MB idle, {held:.0f} MB with {RUNS} runs"


def test_a_cancel_stops_a_run_mid_wait(one_process: Worker, peer: SlowPeer,
                                       rds: redis.Redis, celery_client: Celery) -> None:
    runs = start_runs(one_process, rds, celery_client, peer.url, 20)
    assert wait_for(lambda: peer.open >= 20, 20, step=0.1)
    asked = time.monotonic()
    pipe = rds.pipeline(transaction=True)
    protocol.request_cancel(pipe, runs[0], 60)  # as the gateway cancels
    pipe.execute()
    assert read_run(rds, runs[0], seconds=10)[-1]["type"] == "run.cancelled"
    # Within a poll of the cancels' count, not at the next lease renewal, nor at the
    # end of its wait.
    assert time.monotonic() - asked < protocol.HEARTBEAT_SECONDS - 0.5
    # A cancel key set without the count (a gateway of before) is still seen, at the
    # keeper's next renewal at the latest.
    rds.set(protocol.cancel_key(runs[1]), "1", ex=60)
    assert read_run(rds, runs[1], seconds=10)[-1]["type"] == "run.cancelled"
    assert [read_run(rds, r, seconds=30)[-1]["type"] for r in runs[2:]] == [
        "run.completed"] * 18


def test_a_killed_process_ends_its_runs(one_process: Worker, peer: SlowPeer,
                                        rds: redis.Redis, celery_client: Celery) -> None:
    peer.delay = 60
    runs = start_runs(one_process, rds, celery_client, peer.url, 30)
    assert wait_for(lambda: peer.open >= 30, 20, step=0.1)
    [child] = one_process.children()
    os.kill(child, signal.SIGKILL)
    killed = time.monotonic()
    # Nobody renews their leases: the gateway's reaper ends each runner_lost.
    assert wait_for(lambda: not any(protocol.slot_alive(rds, r) for r in runs),
                    protocol.RUNNING_LEASE_SECONDS + 2, step=0.2)
    assert time.monotonic() - killed <= protocol.RUNNING_LEASE_SECONDS + 2
    # The runner ended none of them itself: they wait for the gateway's verdict.
    assert not any(e["type"] in TERMINAL for r in runs for e in stream_events(rds, r))
    protocol.release_slot(rds, *runs)
    # The worker replaced its process, which runs the next runs.
    peer.delay = 0.1
    more = start_runs(one_process, rds, celery_client, peer.url, 5)
    assert [read_run(rds, r, seconds=30)[-1]["type"] for r in more] == ["run.completed"] * 5



def test_a_process_at_its_share_never_holds_a_run_back(tmp_path: Path, peer: SlowPeer,
                                                       rds: redis.Redis,
                                                       celery_client: Celery) -> None:
    """Two processes, 4 runs: Celery hands a task to whichever process is idle, and one
    whose 2 runs wait (on people, say) still takes a third when the other has room."""
    worker = Worker(tmp_path / "two.log", queue=f"{SESSION_QUEUE}-two-{uuid.uuid4().hex[:8]}",
                    KIONGA_DESIGNER_MAX_RUNS="4", KIONGA_RUNNER_PROCESSES="2")
    try:
        worker.wait_ready()
        peer.delay = 30
        runs = []
        for _ in range(4):
            body = payload(knowledge_graph(), callback_url=peer.url)
            assert protocol.acquire_slot(rds, body["run_id"], 4, token=lease_of(body)) == 1
            runs.append(send(celery_client, rds, body, take_slot=False, queue=worker.queue))
            # One at a time: each task finds the same process idle again.
            assert wait_for(lambda: peer.open >= len(runs), 10, step=0.05)
        assert wait_for(lambda: peer.open >= 4, 10, step=0.1), f"{peer.open} of 4 waiting"
        pipe = rds.pipeline(transaction=True)
        for run_id in runs:
            protocol.request_cancel(pipe, run_id, 60)
        pipe.execute()
        assert [read_run(rds, r, seconds=10)[-1]["type"] for r in runs] == [
            "run.cancelled"] * 4
    finally:
        worker.stop()


def test_a_warm_shutdown_lets_its_runs_end(one_process: Worker, peer: SlowPeer,
                                           rds: redis.Redis, celery_client: Celery) -> None:
    peer.delay = 3
    runs = start_runs(one_process, rds, celery_client, peer.url, 10)
    assert wait_for(lambda: peer.open >= 10, 20, step=0.1)
    one_process.proc.terminate()  # SIGTERM: Celery's warm shutdown
    assert [read_run(rds, r, seconds=30)[-1]["type"] for r in runs] == ["run.completed"] * 10
    assert one_process.proc.wait(30) == 0


def test_a_process_that_dies_ends_only_its_own_runs(tmp_path: Path, peer: SlowPeer,
                                                    rds: redis.Redis,
                                                    celery_client: Celery) -> None:
    worker = Worker(tmp_path / "pair.log", queue=f"{SESSION_QUEUE}-pair-{uuid.uuid4().hex[:8]}",
                    KIONGA_DESIGNER_MAX_RUNS="20", KIONGA_RUNNER_PROCESSES="2")
    try:
        worker.wait_ready()
        peer.delay = 6
        runs = start_runs(worker, rds, celery_client, peer.url, 20)
        assert wait_for(lambda: peer.open >= 20, 20, step=0.1)
        os.kill(worker.children()[0], signal.SIGKILL)
        # Each run either ends (the other process's) or its lease runs out (the killed
        # one's: nobody renews it, and the reaper ends it runner_lost).
        assert wait_for(lambda: all(_ended(rds, r) or not protocol.slot_alive(rds, r)
                                    for r in runs), 20, step=0.2)
        completed = [r for r in runs if _ended(rds, r)]
        lost = [r for r in runs if r not in completed]
        assert completed and lost, f"{len(completed)} completed, {len(lost)} lost"
        assert all(stream_events(rds, r)[-1]["type"] == "run.completed" for r in completed)
        time.sleep(1)  # the killed process's runs stay without an ending of the runner's
        assert not any(_ended(rds, r) or protocol.slot_alive(rds, r) for r in lost)
        protocol.release_slot(rds, *lost)
    finally:
        worker.stop()


def _ended(rds: redis.Redis, run_id: str) -> bool:
    return any(e["type"] in TERMINAL for e in stream_events(rds, run_id))
