"""Cancellation at any point: run.cancelled is the last event, and nothing follows."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from engine_kit import chain, check_events, graph

from runner.backends.mock import MockBackend
from runner.engine import run_graph, run_graph_sync
from runner.inmemory_resources import InMemoryResources
from runner.request import RunRequest

LONG = " ".join(f"w{i}" for i in range(200))


async def cancelled_run(g: dict[str, Any], when: str, *, resources: InMemoryResources | None
                        = None, backend: Any = None) -> tuple[list[dict[str, Any]], Any, float]:
    """Run g and set the cancel event as soon as an event of type `when` is emitted."""
    cancel = asyncio.Event()
    events: list[dict[str, Any]] = []

    def emit(event: dict[str, Any]) -> None:
        events.append(event)
        if event["type"] == when:
            cancel.set()

    started = time.monotonic()
    result = await run_graph(
        RunRequest(graph=g, input=LONG, approval_poll_seconds=0.01),
        resources=resources or InMemoryResources(), emit=emit, cancel=cancel, backend=backend,
    )
    elapsed = time.monotonic() - started
    count = len(events)
    await asyncio.sleep(0.2)  # anything still unwinding would emit now
    assert len(events) == count, "no event after run.cancelled"
    return events, result, elapsed


def assert_cancelled(events: list[dict[str, Any]], result: Any) -> None:
    check_events(events)
    assert events[-1]["type"] == "run.cancelled"
    assert events[-1]["reason"] == "cancelled"
    assert events[-1]["error"]["code"] == "cancelled"
    assert result.status == "cancelled"
    assert result.error == {"code": "cancelled", "message": "the run was cancelled"}


def test_it_cancels_while_a_model_streams() -> None:
    g = graph([("input", "input"), ("m", "model"), ("m2", "model"), ("j", "join"),
               ("output", "output")], ["input>m", "input>m2", "m>j", "m2>j", "j>output"])
    events, result, elapsed = asyncio.run(
        cancelled_run(g, "node.delta", backend=MockBackend(delay=0.02)))
    assert_cancelled(events, result)
    assert elapsed < 1, "the 200-word streams (4 s) were interrupted"
    assert not [e for e in events if e["type"] == "node.completed" and e["node_id"] == "m"]


def test_it_cancels_while_waiting_for_an_approval() -> None:
    resources = InMemoryResources()  # nobody decides
    g = chain(("ok", "approval"))
    events, result, elapsed = asyncio.run(cancelled_run(g, "approval.requested",
                                                        resources=resources))
    assert_cancelled(events, result)
    assert elapsed < 1
    assert [e["type"] for e in events][-2:] == ["approval.requested", "run.cancelled"]
    assert resources.approvals["apr-1"]["status"] == "pending"  # the gateway cancels it


def test_it_cancels_before_the_first_node() -> None:
    events, result, _ = asyncio.run(cancelled_run(chain(), "run.started"))
    assert_cancelled(events, result)
    assert [e["type"] for e in events] == ["run.started", "run.cancelled"]


def test_it_cancels_between_pure_nodes_and_inside_subflows() -> None:
    sub = chain(("m", "model"))
    g = chain(("s", "subflow", {"subflow": "v-1"}))

    async def go() -> tuple[list[dict[str, Any]], Any]:
        cancel = asyncio.Event()
        events: list[dict[str, Any]] = []
        task = asyncio.ensure_future(run_graph(
            RunRequest(graph=g, input=LONG, subflows={"v-1": sub}),
            resources=InMemoryResources(), emit=events.append, cancel=cancel,
            backend=MockBackend(delay=0.02)))
        await asyncio.sleep(0.1)
        cancel.set()
        return events, await task

    events, result = asyncio.run(go())
    assert_cancelled(events, result)


def test_it_emits_run_cancelled_when_its_own_task_is_cancelled() -> None:
    events: list[dict[str, Any]] = []

    async def go() -> None:
        task = asyncio.ensure_future(run_graph(
            RunRequest(graph=chain(("m", "model")), input=LONG),
            resources=InMemoryResources(), emit=events.append,
            backend=MockBackend(delay=0.02)))
        await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(go())
    check_events(events)
    assert events[-1]["type"] == "run.cancelled"


def test_it_cancels_a_sync_run_from_another_thread() -> None:
    flag = threading.Event()
    events: list[dict[str, Any]] = []
    timer = threading.Timer(0.2, flag.set)
    timer.start()
    started = time.monotonic()
    result = run_graph_sync(RunRequest(graph=chain(("m", "model")), input=LONG),
                            resources=InMemoryResources(), emit=events.append, cancel=flag,
                            backend=MockBackend(delay=0.02))
    timer.join()
    assert time.monotonic() - started < 1.5
    assert result.status == "cancelled"
    check_events(events)
    assert events[-1]["type"] == "run.cancelled"


def test_it_keeps_a_slow_emit_quiet_after_cancellation() -> None:
    received: list[dict[str, Any]] = []

    def emit(event: dict[str, Any]) -> None:
        time.sleep(0.005)  # a slow sink
        received.append(event)

    async def go() -> Any:
        cancel = asyncio.Event()
        task = asyncio.ensure_future(run_graph(
            RunRequest(graph=chain(("m", "model")), input=LONG),
            resources=InMemoryResources(), emit=emit, cancel=cancel,
            backend=MockBackend(delay=0.001)))
        await asyncio.sleep(0.05)
        cancel.set()
        result = await task
        count = len(received)
        await asyncio.sleep(0.2)
        assert len(received) == count
        return result

    result = asyncio.run(go())
    check_events(received)
    assert received[-1]["type"] == "run.cancelled"
    assert result.events == len([e for e in received if e["type"] != "node.delta"])
