"""subflow, map and loop: published versions handed to the run as normalized graphs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from engine_kit import chain, graph, run

from runner.inmemory_resources import InMemoryResources

SHOUT = chain(("p", "prompt", {"template": "{input}!"}))
WRAP = chain(("p", "prompt", {"template": "[{input}]"}))
FAILS = chain(("x", "extract", {"path": "nope"}))
SUBFLOWS = {"v-shout": SHOUT, "v-wrap": WRAP, "v-fails": FAILS,
            "v-nested": chain(("s", "subflow", {"subflow": "v-shout"})),
            "v-model": chain(("m", "model")),
            "v-approve": chain(("a", "approval"))}


def flow(kind: str, config: dict[str, str]) -> dict[str, Any]:
    return graph(
        [("input", "input"), ("f", kind, config),
         ("handle", "prompt", {"template": "error: {input}"}), ("output", "output")],
        ["input>f", "f>output", "f.error>handle", "handle>output"]
        + (["f.exhausted>output"] if kind == "loop" else []),
    )


def test_it_runs_a_subflow_with_the_incoming_value() -> None:
    done = run(flow("subflow", {"subflow": "v-shout"}), "hey", subflows=SUBFLOWS)
    assert done.result.output == "hey!"
    assert done.completed("f")["port"] == "out"
    # The nested run's own events stay inside it.
    assert {e.get("node_id") for e in done.stored} <= {None, "input", "f", "handle", "output"}


def test_it_nests_subflows_and_counts_their_tokens() -> None:
    assert run(flow("subflow", {"subflow": "v-nested"}), "a",
               subflows=SUBFLOWS).result.output == "a!"
    done = run(flow("subflow", {"subflow": "v-model"}), "two words", subflows=SUBFLOWS)
    assert done.result.output == "mock: two words"
    assert done.result.usage == {"tokens": 5}
    assert done.completed("f")["usage"] == {"tokens": 5}


@pytest.mark.parametrize(("kind", "config"), [
    ("subflow", {"subflow": "v-fails"}),
    ("map", {"subflow": "v-fails"}),
    ("loop", {"subflow": "v-fails"}),
    ("subflow", {"subflow": "v-missing"}),
])
def test_it_sends_a_failed_flow_down_the_error_port(kind: str, config: dict[str, str]) -> None:
    done = run(flow(kind, config), "[1]", subflows=SUBFLOWS)
    failed = done.one("node.failed", "f")
    assert failed["port"] == "error" and failed["error"]["code"] == "node_error"
    assert done.result.status == "completed"
    assert (done.result.output or "").startswith("error: subflow ")


def test_it_fails_the_run_when_a_subflow_fails_without_an_error_port() -> None:
    done = run(chain(("s", "subflow", {"subflow": "v-fails"})), subflows=SUBFLOWS)
    assert done.terminal["node_id"] == "s"
    assert "at x" in done.terminal["error"]["message"]


@pytest.mark.parametrize(
    ("text", "outputs"),
    [
        ('["a", "b", "c"]', ["a!", "b!", "c!"]),
        ('[{"k": 1}, 2]', ['{"k":1}!', "2!"]),
        ("single", ["single!"]),  # not a list: one item
        ('{"k": 1}', ['{"k":1}!']),
    ],
)
def test_it_maps_a_subflow_over_list_items(text: str, outputs: list[str]) -> None:
    done = run(flow("map", {"subflow": "v-shout", "concurrency": "2"}), text, subflows=SUBFLOWS)
    assert json.loads(done.result.output or "") == outputs
    assert done.completed("f")["iterations"] == len(outputs)


def test_it_refuses_more_items_than_max_items() -> None:
    done = run(flow("map", {"subflow": "v-shout", "max_items": "2"}), "[1, 2, 3]",
               subflows=SUBFLOWS)
    assert done.one("node.failed", "f")["error"]["message"] == "3 items; max_items is 2"


@pytest.mark.parametrize(
    ("config", "port", "output", "iterations"),
    [
        ({"until": "longer_than:3"}, "out", "x!!!", 3),
        ({"until": "contains:!!"}, "out", "x!!", 2),
        ({"until": "longer_than:100", "max_iterations": "5"}, "exhausted", "x!!!!!", 5),
        ({}, "out", "x!!!", 3),  # without until: max_iterations (3), then out
    ],
)
def test_it_loops_until_the_condition_holds(config: dict[str, str], port: str, output: str,
                                            iterations: int) -> None:
    done = run(flow("loop", {"subflow": "v-shout", **config}), "x", subflows=SUBFLOWS)
    completed = done.completed("f")
    assert (completed["port"], completed["iterations"]) == (port, iterations)
    assert done.result.output == output


def test_it_surfaces_approvals_of_a_subflow_on_the_calling_node() -> None:
    resources = InMemoryResources(auto_decision=("approve", ""))
    done = run(flow("subflow", {"subflow": "v-approve"}), "ship it", subflows=SUBFLOWS,
               resources=resources)
    assert done.one("approval.requested", "f")["approval_id"] == "apr-1"
    assert done.one("approval.resolved", "f")["port"] == "approved"
    assert done.result.output == "ship it"


def test_it_maps_with_bounded_concurrency() -> None:
    import asyncio
    import time

    running = {"now": 0, "peak": 0}

    async def slow(value: Any) -> str:
        running["now"] += 1
        running["peak"] = max(running["peak"], running["now"])
        await asyncio.sleep(0.1)
        running["now"] -= 1
        return "ok"

    resources = InMemoryResources(functions={"slow": slow})
    subflows = {"v-slow": chain(("t", "tool", {"tool": "slow"}))}
    started = time.monotonic()
    done = run(flow("map", {"subflow": "v-slow", "concurrency": "2"}), "[1, 2, 3, 4]",
               subflows=subflows, resources=resources, allow_side_effects=True)
    elapsed = time.monotonic() - started
    assert done.completed("f")["iterations"] == 4
    assert running["peak"] == 2
    assert 0.18 < elapsed < 0.39  # two rounds of two, not four in a row (0.4 s)
