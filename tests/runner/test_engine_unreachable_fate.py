"""The validator's `unreachable_node` warning says what the runner does with the node,
and the runner does it: a node without an inbound edge runs at the start of every run
on empty text (the reference's rule; an approval is skipped instead), what it feeds
receives only its values, and a node nothing that runs feeds is skipped."""

from __future__ import annotations

from typing import Any

from engine_kit import graph, run

from contracts.validate import validate_graph
from runner.inmemory_resources import InMemoryResources

RUNS_ALONE = ("No path leads from the input to 'lone'; it never receives a value, so it "
              "runs at the start of every run on empty text (a node without an inbound "
              "edge always runs).")
FED_BY_LONE = ("No path leads from the input to 'note'; it receives only what nodes "
               "without an inbound edge send it.")
SKIPPED = ("No path leads from the input to 'after'; it never receives a value, so it is "
           "skipped at every run.")


def warnings(g: dict[str, Any]) -> dict[str, str]:
    report = validate_graph(g)
    assert report.runnable
    return {i.node_id or "": i.message for i in report.issues if i.code == "unreachable_node"}


def lone_prompt_graph() -> dict[str, Any]:
    """input → output, and beside it lone (prompt, no inbound edge) → note → output."""
    return graph([("input", "input"), ("lone", "prompt", {"template": "[{input}]"}),
                  ("note", "prompt", {"template": "note {input}"}), ("output", "output")],
                 ["input>output", "lone>note", "note>output"])


def lone_approval_graph() -> dict[str, Any]:
    """input → output, and beside it ask (approval, no inbound edge) → after → output."""
    return graph([("input", "input"), ("ask", "approval", {"message": "Send it?"}),
                  ("after", "prompt", {"template": "approved: {input}"}),
                  ("output", "output")],
                 ["input>output", "ask.approved>after", "after>output"])


def test_a_node_without_an_inbound_edge_is_said_to_run_and_runs() -> None:
    g = lone_prompt_graph()
    assert warnings(g) == {"lone": RUNS_ALONE, "note": FED_BY_LONE}
    done = run(g, "x")
    assert {"lone", "note"} <= set(done.ran())
    assert done.completed("note")["preview"] == "note []"


def test_what_a_skipped_node_feeds_is_said_to_be_skipped_and_is() -> None:
    g = lone_approval_graph()
    said = warnings(g)
    assert said["after"] == SKIPPED
    assert "so it is skipped at every run (approval nodes" in said["ask"]
    done = run(g, "x", resources=InMemoryResources(auto_decision=("approve", "")))
    assert set(done.skipped()) == {"ask", "after"}
