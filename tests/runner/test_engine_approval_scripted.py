"""A run given scripted approvals (an evaluation's case) never asks anyone: no request
is created, and each approval node fires at once as the script says, node.completed
carrying the port and the reason (run-event.v1 is checked on every event)."""

from __future__ import annotations

from typing import Any

import pytest
from engine_kit import graph, run

from runner.inmemory_resources import InMemoryResources
from runner.request import ScriptedApprovals


def two_gates() -> dict[str, Any]:
    """input → first → second → "sent: …"; any rejected port → "held: <comment>"."""
    return graph([("input", "input"), ("first", "approval"), ("second", "approval"),
                  ("sent", "prompt", {"template": "sent: {input}"}),
                  ("held", "prompt", {"template": "held: {input}"}), ("output", "output")],
                 ["input>first", "first.approved>second", "second.approved>sent",
                  "first.rejected>held", "second.rejected>held", "sent>output",
                  "held>output"])


@pytest.mark.parametrize(("script", "ports", "output"), [
    (ScriptedApprovals(), {"first": "approved", "second": "approved"}, "sent: refund"),
    (ScriptedApprovals("reject"), {"first": "rejected"}, "held: "),
    (ScriptedApprovals(nodes={"second": "reject"}),
     {"first": "approved", "second": "rejected"}, "held: "),
])
def test_it_resolves_approvals_as_scripted_without_a_request(
        script: ScriptedApprovals, ports: dict[str, str], output: str) -> None:
    resources = InMemoryResources()
    done = run(two_gates(), "refund", resources=resources, scripted_approvals=script)
    assert done.result.status == "completed" and done.result.output == output
    for node_id, port in ports.items():
        completed = done.completed(node_id)
        assert (completed["port"], completed["reason"]) == (port, port)
    assert resources.calls == [] and resources.approvals == {}
    assert not done.of("approval.requested") and not done.of("approval.resolved")


def test_an_approval_in_a_subflow_follows_its_calling_node() -> None:
    asks = graph([("input", "input"), ("a", "approval"),
                  ("no", "prompt", {"template": "no"}), ("output", "output")],
                 ["input>a", "a.approved>output", "a.rejected>no", "no>output"])
    caller = graph([("input", "input"), ("f", "subflow", {"subflow": "v-ask"}),
                    ("g", "subflow", {"subflow": "v-ask"}), ("j", "join"),
                    ("output", "output")],
                   ["input>f", "input>g", "f>j", "g>j", "j>output"])
    resources = InMemoryResources()
    done = run(caller, "go", resources=resources, subflows={"v-ask": asks},
               scripted_approvals=ScriptedApprovals(nodes={"g": "reject"}))
    assert done.result.output == '{"f":"go","g":"no"}'
    assert resources.calls == []
