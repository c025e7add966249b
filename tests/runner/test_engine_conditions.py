"""Every condition operator, evaluated by a condition node (contracts.conditions)."""

from __future__ import annotations

import pytest
from engine_kit import graph, run

CASES = [
    ("contains:Refund", "I want a REFUND now", "true"),
    ("contains:refund", "I want money back", "false"),
    ("not_contains:refund", "I want money back", "true"),
    ("not_contains:REFUND", "a refund", "false"),
    ("equals:Yes", "  yes \n", "true"),  # any case, both sides trimmed
    ("equals: yes ", "yes", "true"),
    ("equals:yes", "yes please", "false"),
    ("matches:^order-\\d{3}$", "order-123", "true"),
    ("matches:\\d+", "call 555 now", "true"),  # search, not full match
    ("matches:abc", "ABC", "false"),  # case-sensitive
    ("matches:(?i)abc", "ABC", "true"),
    ("longer_than:5", "123456", "true"),
    ("longer_than:5", "12345", "false"),
    ("longer_than:2", "  é ", "true"),  # code points of the untrimmed text
    ("empty", "   \n ", "true"),
    ("empty", " x ", "false"),
    ("not_empty", "x", "true"),
    ("not_empty", "  ", "false"),
]


def condition_graph(expression: str) -> dict[str, object]:
    return graph(
        [("input", "input"), ("c", "condition", {"expression": expression}),
         ("t", "prompt", {"template": "true"}), ("f", "prompt", {"template": "false"}),
         ("output", "output")],
        ["input>c", "c.true>t", "c.false>f", "t>output", "f>output"],
    )


@pytest.mark.parametrize(("expression", "text", "port"), CASES)
def test_it_evaluates_each_operator(expression: str, text: str, port: str) -> None:
    done = run(condition_graph(expression), text)
    assert done.completed("c")["port"] == port
    assert done.result.output == port
    assert done.skipped() == ["f" if port == "true" else "t"]


@pytest.mark.parametrize("expression", ["nope:x", "contains:", "matches:(", "longer_than:x",
                                        "empty:x", "matches:" + "a" * 201])
def test_it_fails_the_node_on_a_bad_expression(expression: str) -> None:
    done = run(condition_graph(expression), "text")
    assert done.result.status == "failed"
    assert done.terminal["node_id"] == "c"
    assert done.one("node.failed", "c")["error"]["code"] == "node_error"


def test_it_checks_conditions_on_json_as_compact_text() -> None:
    g = graph([("input", "input"), ("j", "join"), ("c", "condition",
                                                  {"expression": 'contains:{"input":"x"}'}),
               ("output", "output")], ["input>j", "j>c", "c.true>output"])
    assert run(g, "x").result.output == '{"input":"x"}'
