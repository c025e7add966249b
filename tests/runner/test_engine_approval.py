"""Approvals: expiry (the gateway's or the runner's own deadline) and polling."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from engine_kit import graph, run_async

from runner.components import approval
from runner.inmemory_resources import InMemoryResources


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
