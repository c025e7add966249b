"""Approvals: expiry (the gateway's or the runner's own deadline) and polling."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from engine_kit import graph, run_async

from runner.components import approval
from runner.inmemory_resources import InMemoryResources
from runner.request import RunRequest


def approval_graph(config: dict[str, str] | None = None) -> dict[str, Any]:
    return graph([("input", "input"), ("ok", "approval", config or {}),
                  ("yes", "prompt", {"template": "yes"}),
                  ("no", "prompt", {"template": "no: {input}"}), ("output", "output")],
                 ["input>ok", "ok.approved>yes", "ok.rejected>no", "yes>output", "no>output"])


async def decide_later(resources: InMemoryResources, action: str, *args: str) -> None:
    while not resources.approvals:
        await asyncio.sleep(0.005)
    await asyncio.sleep(0.03)  # a few polls happen first
    approval_id = next(iter(resources.approvals))
    if action == "expire":
        resources.expire(approval_id)
    else:
        resources.decide(approval_id, action, *args)


@pytest.mark.parametrize(
    ("action", "args", "port", "reason", "output"),
    [
        ("approve", (), "approved", "approved", "yes"),
        ("reject", ("not today",), "rejected", "rejected", "no: not today"),
        ("expire", (), "rejected", "expired", "no: expired"),
    ],
)
def test_it_polls_until_a_decision(action: str, args: tuple[str, ...], port: str,
                                   reason: str, output: str) -> None:
    resources = InMemoryResources()

    async def go() -> Any:
        decider = asyncio.ensure_future(decide_later(resources, action, *args))
        done = await run_async(approval_graph(), "deploy", resources=resources)
        await decider
        return done

    done = asyncio.run(go())
    assert done.completed("ok")["port"] == port
    assert done.completed("ok")["reason"] == reason
    assert done.one("approval.resolved", "ok")["reason"] == reason
    assert done.result.output == output
    polls = [c for c in resources.calls if c[0].startswith("agent-approvals/")]
    assert len(polls) >= 2


def test_it_expires_on_its_own_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(approval, "SECOND", 0.005)  # timeout_seconds 10 → 50 ms
    resources = InMemoryResources()
    done = asyncio.run(run_async(approval_graph({"timeout_seconds": "10"}), "x",
                                 resources=resources))
    assert done.completed("ok")["port"] == "rejected"
    assert done.completed("ok")["reason"] == "expired"
    assert resources.approvals["apr-1"]["timeout_seconds"] == 10
    assert done.result.output == "no: expired"


def test_it_sends_the_redacted_message_and_preview() -> None:
    resources = InMemoryResources(auto_decision=("approve", ""))
    asyncio.run(run_async(approval_graph({"message": "Refund {input}?"}), "order 9",
                          resources=resources))
    created = resources.calls[0]
    assert created == ("agent-approvals", {"node_id": "ok", "message": "Refund order 9?",
                                           "preview": "order 9", "timeout_seconds": 120})


class LateGateway(InMemoryResources):
    """A gateway whose clock runs behind the runner's: it reports a decision it accepted
    only after the node's own deadline has passed."""

    def __init__(self, decide_after: float) -> None:
        super().__init__()
        self.decide_after = decide_after
        self.created = 0.0

    async def create_approval(self, node_id: str, message: str, preview: str,
                              timeout_seconds: int) -> dict[str, Any]:
        created = await super().create_approval(node_id, message, preview, timeout_seconds)
        self.created = time.monotonic()
        return created

    async def get_approval(self, approval_id: str, wait: float = 0.0) -> dict[str, Any]:
        if time.monotonic() - self.created >= self.decide_after:
            self.decide(approval_id, "approve")
        return await super().get_approval(approval_id, wait)


def test_it_takes_the_gateways_verdict_past_its_own_deadline(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(approval, "SECOND", 0.005)  # timeout_seconds 10 → 50 ms
    monkeypatch.setattr(approval, "GRACE_SECONDS", 1000)  # → 5 s of grace at most
    resources = LateGateway(decide_after=0.08)  # 30 ms after the node's deadline
    done = asyncio.run(run_async(approval_graph({"timeout_seconds": "10"}), "x",
                                 resources=resources))
    assert done.completed("ok")["port"] == "approved"
    assert done.one("approval.resolved", "ok")["reason"] == "approved"


def test_it_polls_often_enough_for_a_decision_to_arrive_within_a_second() -> None:
    # A decision reaches the run at the next poll: one interval plus one request.
    assert RunRequest(graph={}).approval_poll_seconds <= 0.5
