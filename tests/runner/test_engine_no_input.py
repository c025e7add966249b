"""An approval node that no edge leads into never runs: it is skipped (nobody is asked
about an empty value), and the validator's warning says exactly that."""

from __future__ import annotations

from engine_kit import graph, run

from contracts.validate import validate_graph
from runner.inmemory_resources import InMemoryResources


def lone_approval_graph() -> dict[str, object]:
    """input → output, and beside it ask (approval) → note (prompt) → output."""
    return graph([("input", "input"), ("ask", "approval", {"message": "Send it?"}),
                  ("note", "prompt", {"template": "approved: {input}"}),
                  ("output", "output")],
                 ["input>output", "ask.approved>note", "note>output"])


def test_an_approval_without_an_inbound_edge_is_skipped_and_asks_nobody() -> None:
    resources = InMemoryResources(auto_decision=("approve", ""))
    done = run(lone_approval_graph(), "the refund", resources=resources)
    assert done.result.status == "completed"
    assert done.result.output == "the refund"
    assert done.skipped() == ["ask", "note"]
    assert "ask" not in done.ran()
    assert resources.approvals == {}
    assert not [c for c in resources.calls if c[0].startswith("agent-approvals")]
    assert not done.of("approval.requested") and not done.of("approval.resolved")
    assert done.result.steps == 2  # input and output: a skipped node is not a step


def test_the_validator_warns_that_it_is_skipped() -> None:
    report = validate_graph(lone_approval_graph())
    assert report.runnable
    warned = {i.node_id: i.message for i in report.issues if i.code == "unreachable_node"}
    assert set(warned) == {"ask", "note"}
    assert warned["ask"] == ("No path leads from the input to 'ask'; it never receives a "
                             "value, so it is skipped at every run (approval nodes do not run "
                             "without one).")
    assert warned["note"].endswith("it never receives a value, so it is skipped at every run.")


def test_a_lone_prompt_still_runs_on_empty_text() -> None:
    # The reference's rule stands for every other kind: no inbound edge, it runs.
    g = graph([("input", "input"), ("lone", "prompt", {"template": "[{input}]"}),
               ("j", "join"), ("output", "output")], ["input>j", "lone>j", "j>output"])
    assert run(g, "x").completed("lone")["preview"] == "[]"
