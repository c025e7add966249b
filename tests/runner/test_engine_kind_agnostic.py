"""The scheduler follows the registry's flags, never a node's kind: a new kind needs
its registry entry and its implementation only."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path
from typing import Any

import pytest
from engine_kit import run

from contracts.registry import COMPONENTS, Component, Port
from runner import plan, scheduler
from runner.components import IMPLEMENTATIONS, implements
from runner.context import NodeContext, NodeOutput


def test_it_has_an_implementation_of_every_kind_as_the_registry_says() -> None:
    assert sorted(IMPLEMENTATIONS) == sorted(COMPONENTS)
    for kind, function in IMPLEMENTATIONS.items():
        assert inspect.iscoroutinefunction(function) == (not COMPONENTS[kind].pure), kind


def test_it_refuses_an_implementation_that_disagrees_with_the_registry() -> None:
    with pytest.raises(TypeError, match="cannot implement 'prompt'"):
        @implements("prompt")
        async def wrong(ctx: NodeContext, value: Any, vtype: Any) -> NodeOutput:
            return NodeOutput("out", value)


@pytest.mark.parametrize("pure", [True, False])
def test_it_runs_a_new_kind_from_its_registry_entry_and_implementation(
        monkeypatch: pytest.MonkeyPatch, pure: bool) -> None:
    monkeypatch.setitem(COMPONENTS, "shout", Component(
        "shout", "Shout", "Upper case.", (Port("in", ("text",)),), (Port("out", ("text",)),),
        pure=pure))

    def shout(ctx: NodeContext, value: Any, vtype: Any) -> NodeOutput:
        return NodeOutput("out", str(value).upper())

    async def shout_later(ctx: NodeContext, value: Any, vtype: Any) -> NodeOutput:
        return shout(ctx, value, vtype)

    monkeypatch.setitem(IMPLEMENTATIONS, "shout", IMPLEMENTATIONS["input"])  # restored after
    if pure:
        implements("shout")(shout)
    else:
        implements("shout")(shout_later)
    graph = {"nodes": [{"id": "input", "kind": "input"}, {"id": "s", "kind": "shout"},
                       {"id": "output", "kind": "output"}],
             "edges": [{"from": "input", "to": "s"}, {"from": "s", "to": "output"}]}
    done = run(graph, "hey")
    assert done.result.output == "HEY"


@pytest.mark.parametrize("module", [scheduler, plan])
def test_it_never_branches_on_a_kind(module: Any) -> None:
    tree = ast.parse(Path(module.__file__).read_text())
    compared = [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, ast.Compare)
                and any(isinstance(side, ast.Attribute) and side.attr == "kind"
                        for side in [node.left, *node.comparators])]
    assert compared == []
