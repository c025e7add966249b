"""Every runnable shared fixture (contracts/fixtures/graphs/*.json) runs with the mock
backend and in-memory resources, and ends with exactly one terminal event."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from engine_kit import chain, run_async

from contracts.fixtures import load_graph_fixtures
from contracts.registry import COMPONENTS
from contracts.resources import StaticResources
from contracts.validate import validate_graph
from runner.inmemory_resources import InMemoryResources

FIXTURES = [f for f in load_graph_fixtures() if f["expected"]["runnable"]]


class AnyKey(dict[str, str]):
    """A dataset where every key holds an object."""

    def __contains__(self, key: object) -> bool:
        return True

    def __missing__(self, key: str) -> str:
        return f"stored object {key}"


def resource_ids(graph: dict[str, Any]) -> dict[str, list[str]]:
    """Every resource ID the graph's config names, by resource kind (from the registry)."""
    ids: dict[str, list[str]] = {}
    for node in graph["nodes"]:
        for setting in COMPONENTS[node["kind"]].settings:
            value = node["config"].get(setting.name)
            if setting.resource and value and value != "llm":
                ids.setdefault(setting.resource, []).append(value)
    return ids


def resources_for(graph: dict[str, Any]) -> tuple[InMemoryResources, dict[str, Any]]:
    """In-memory resources answering for every ID the graph names."""
    ids = resource_ids(graph)
    resources = InMemoryResources(
        models={i: "a model answer" for i in ids.get("model", [])},
        functions={i: {"ok": True} for i in ids.get("function", [])},
        connections={i: {"ok": True} for i in ids.get("connection", [])},
        knowledge={i: [{"text": "Refunds take five days."}] for i in ids.get("knowledge_base", [])},
        datasets={i: AnyKey() for i in ids.get("dataset", [])},
        auto_decision=("approve", "ok"),
    )
    subflows = {i: chain(("p", "prompt", {"template": "sub {input}"}))
                for i in ids.get("version", [])}
    return resources, subflows


def test_it_has_runnable_fixtures() -> None:
    assert len(FIXTURES) >= 5


@pytest.mark.parametrize("fixture", FIXTURES, ids=[f["name"] for f in FIXTURES])
@pytest.mark.parametrize("side_effects", [False, True])
def test_it_runs_every_runnable_fixture_to_one_terminal_event(fixture: dict[str, Any],
                                                              side_effects: bool) -> None:
    check = StaticResources(fixture["resources"]) if "resources" in fixture else None
    report = validate_graph(fixture["graph"], check)
    assert report.runnable and report.graph is not None
    resources, subflows = resources_for(report.graph)
    done = asyncio.run(asyncio.wait_for(run_async(
        report.graph, "I want a refund for order #42", resources=resources, subflows=subflows,
        allow_side_effects=side_effects, history=[{"role": "user", "content": "earlier"}],
    ), timeout=30))
    # run_async checked the invariants: schema, seq, exactly one terminal event, last.
    assert done.terminal["type"] in {"run.completed", "run.failed"}
    if side_effects and done.terminal["type"] == "run.failed":
        # With every resource present and side effects allowed, only a graph's own
        # logic (e.g. an extract path that is missing) may fail it.
        assert done.terminal["error"]["code"] == "node_error", done.terminal
