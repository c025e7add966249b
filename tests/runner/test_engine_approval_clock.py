"""A run's timeout_seconds does not count the time spent waiting for a person: the
approval's own timeout bounds that wait. The clock stands still during the wait (a
nested run's and its calling node's too) and runs again after it."""

from __future__ import annotations

import asyncio
from typing import Any

from engine_kit import Run, chain, graph, run_async

from runner.inmemory_resources import InMemoryResources

WAIT = 1.5  # seconds until the decision: longer than the runs' timeout_seconds (1)


async def decide_after(resources: InMemoryResources, seconds: float) -> None:
    while not resources.approvals:
        await asyncio.sleep(0.005)
    await asyncio.sleep(seconds)
    resources.decide(next(iter(resources.approvals)), "approve")


def run_deciding(g: dict[str, Any], resources: InMemoryResources, **request: Any) -> Run:
    async def go() -> Run:
        decider = asyncio.ensure_future(decide_after(resources, WAIT))
        done = await run_async(g, "the refund", resources=resources, **request)
        decider.cancel()
        return done

    return asyncio.run(go())


def gated(*after: Any) -> dict[str, Any]:
    """input → ask (approval) → [after…] → output, timeout_seconds 1."""
    return chain(("ask", "approval", {"timeout_seconds": "10"}), *after,
                 settings={"timeout_seconds": 1})


def test_a_wait_longer_than_the_runs_timeout_does_not_end_the_run() -> None:
    done = run_deciding(gated(), InMemoryResources())
    assert done.result.status == "completed", done.terminal
    assert done.one("approval.resolved", "ask")["port"] == "approved"
    assert done.result.output == "the refund"


def test_the_clock_runs_again_after_the_wait() -> None:
    async def slow(messages: list[dict[str, Any]]) -> str:
        await asyncio.sleep(1.2)  # work after the wait, longer than timeout_seconds
        return "late"

    resources = InMemoryResources(models={"slow": slow})
    done = run_deciding(gated(("m", "model", {"model": "slow"})), resources)
    assert done.one("approval.resolved", "ask")["port"] == "approved"
    assert (done.terminal["type"], done.terminal["reason"]) == ("run.failed", "timeout")
    assert done.terminal["error"]["message"] == "the run took longer than timeout_seconds (1 s)"


def test_a_wait_inside_a_subflow_stops_every_enclosing_clock() -> None:
    nested = chain(("ask", "approval", {"timeout_seconds": "10"}),
                   settings={"timeout_seconds": 1})
    caller = graph([("input", "input"), ("f", "subflow", {"subflow": "v-ask"}),
                    ("output", "output")], ["input>f", "f>output"],
                   {"timeout_seconds": 1})
    # The subflow node's own timeout is shorter than the wait too.
    done = run_deciding(caller, InMemoryResources(), subflows={"v-ask": nested},
                        node_timeouts={"subflow": 1.0})
    assert done.result.status == "completed", done.terminal
    assert done.one("approval.resolved", "f")["port"] == "approved"
    assert done.result.output == "the refund"
