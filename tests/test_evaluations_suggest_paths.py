"""Every suggested case takes the path it was made for, when the engine runs it.

For every starter template and every runnable shared fixture graph that branches (a
condition or router node): run each suggestion's input with the engine (mock backend,
in-memory resources) and check that every node of expected.calls completed and that
each branching node fired the port the path takes.
"""

from __future__ import annotations

from typing import Any

import pytest

from contracts.fixtures import load_graph_fixtures
from contracts.suggest import suggest_cases
from contracts.validate import validate_graph
from designs.starter_templates import TEMPLATES
from runner.engine import run_graph_sync
from runner.inmemory_resources import InMemoryResources
from runner.request import RunRequest

BRANCHING = ("condition", "router")


def _branches(graph: dict[str, Any]) -> bool:
    return any(node.get("kind") in BRANCHING for node in graph["nodes"])


GRAPHS: dict[str, dict[str, Any]] = {
    **{f"template:{t['id']}": t["graph"] for t in TEMPLATES},
    **{f"fixture:{f['name']}": f["graph"] for f in load_graph_fixtures()
       if f["expected"]["runnable"] and _branches(f["graph"])},
}


def _normalized(graph: dict[str, Any]) -> dict[str, Any]:
    report = validate_graph(graph, None)
    assert report.graph is not None
    return report.graph


def _run(graph: dict[str, Any], text: str) -> list[dict[str, Any]]:
    events: list[dict[str, Any]] = []
    # The branching graphs call no resource but the platform model ("llm", the mock).
    result = run_graph_sync(RunRequest(graph=graph, input=text),
                            resources=InMemoryResources(), emit=events.append)
    assert result.status == "completed", (result.status, result.error)
    return events


def test_it_covers_the_branching_graphs() -> None:
    assert {"template:support-triage", "template:topic-router",
            "fixture:template-router", "fixture:template-condition-branching",
            "fixture:reference-example"} <= set(GRAPHS)


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_each_suggestion_takes_its_path(name: str) -> None:
    graph = _normalized(GRAPHS[name])
    suggestions = suggest_cases(graph)
    assert suggestions, name
    for suggestion in suggestions:
        events = _run(graph, suggestion.input)
        completed = {e["node_id"]: e.get("port") for e in events
                     if e["type"] == "node.completed"}
        assert set(suggestion.calls) <= set(completed), (suggestion.name, suggestion.input)
        kinds = {n["id"]: n["kind"] for n in graph["nodes"]}
        for hop in suggestion.path:
            if kinds[hop.node] in BRANCHING:
                assert completed[hop.node] == hop.port, (suggestion.name, suggestion.input)


def test_the_router_template_gets_one_case_per_route() -> None:
    graph = _normalized(GRAPHS["template:topic-router"])
    ports = [next(h.port for h in s.path if h.node == "router") for s in suggest_cases(graph)]
    assert sorted(ports) == ["default", "route_1", "route_2", "route_3"]
