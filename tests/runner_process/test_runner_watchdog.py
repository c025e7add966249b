"""A run that hogs its process's event loop is ended by the watchdog (runner.host) within
BLOCK_SECONDS and a beat, named in the log, with run.failed reason loop_blocked; the
process's other runs, waiting on a real HTTP peer meanwhile, go on and complete."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import redis

from runner import host as host_module
from runner import protocol, task_signature, worker
from runner.backends.mock import MockBackend
from runner.settings import RunnerSettings
from tests.runner_process.runner_kit import (
    TOKEN,
    knowledge_graph,
    mock_graph,
    payload,
    slot_for,
    slow_gateway,
    stream_events,
)

HOG = "hog the loop"
OTHERS = 5


def hogging_engine() -> Any:
    real = worker.run_graph

    async def engine(request: Any, **kwargs: Any) -> Any:
        if request.input != HOG:
            return await real(request, **kwargs)
        kwargs["emit"]({"seq": 0, "type": "run.started", "at": protocol.now_iso()})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # CPU work that never awaits
            sum(range(1000))
        raise AssertionError("the watchdog did not stop the hog")

    return engine


def hogging_model() -> Any:
    """The mock model, but one that computes for a minute on the hog's input: the hog is
    in a node's own task, below the run's."""
    real = MockBackend.complete

    async def complete(self: MockBackend, messages: Any, on_delta: Any) -> Any:
        if HOG not in str(messages):
            return await real(self, messages, on_delta)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            sum(range(1000))
        raise AssertionError("the watchdog did not stop the hog")

    return complete


@pytest.mark.parametrize("where", ["engine", "node"])
@pytest.mark.allow_output  # the watchdog logs the run it ends
def test_the_watchdog_ends_a_hog_and_the_others_go_on(
        where: str, runner_settings: RunnerSettings, sink_redis: redis.Redis,
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    if where == "engine":
        monkeypatch.setattr(worker, "run_graph", hogging_engine())
    else:
        monkeypatch.setattr(MockBackend, "complete", hogging_model())
    outcomes: dict[str, str] = {}
    took: dict[str, float] = {}

    def run(body: dict[str, Any]) -> None:
        assert slot_for(sink_redis, body, 100)
        began = time.monotonic()
        outcomes[body["run_id"]] = worker.execute(body, task_signature.sign(body, TOKEN),
                                                  settings=runner_settings, client=sink_redis)
        took[body["run_id"]] = time.monotonic() - began

    with slow_gateway(delay=1.0) as (url, seen):
        others = [payload(knowledge_graph(), callback_url=url) for _ in range(OTHERS)]
        hog = payload(mock_graph(), text=HOG)
        threads = [threading.Thread(target=run, args=(body,)) for body in others]
        for thread in threads:
            thread.start()
        hog_thread = threading.Thread(target=run, args=(hog,))
        hog_thread.start()
        for thread in [*threads, hog_thread]:
            thread.join(30)
    assert outcomes[hog["run_id"]] == host_module.LOOP_BLOCKED
    assert took[hog["run_id"]] < host_module.BLOCK_SECONDS + 2
    ending = stream_events(sink_redis, hog["run_id"])[-1]
    assert (ending["type"], ending["reason"], ending["error"]["code"]) == (
        "run.failed", "loop_blocked", "timeout")
    assert "event loop" in ending["error"]["message"]
    assert f"run {hog['run_id']}: held the event loop" in caplog.text
    # The others waited their 1 s call, stalled at most by the bound.
    assert [outcomes[b["run_id"]] for b in others] == ["completed"] * OTHERS
    assert len(seen) == OTHERS
    assert max(took[b["run_id"]] for b in others) < 1.0 + host_module.BLOCK_SECONDS + 2
    for body in [*others, hog]:
        assert not protocol.slot_alive(sink_redis, body["run_id"])
