"""Re-run planning on normalized graphs: what runs again, what may repeat, what changed."""

from __future__ import annotations

from typing import Any

from contracts.normalize import normalize
from contracts.replay import changed_upstream, downstream, upstream


def doc(template: str = "Say {input}", extra: bool = False) -> dict[str, Any]:
    nodes = [{"id": "input", "kind": "input"},
             {"id": "p", "kind": "prompt", "config": {"template": template}},
             {"id": "m1", "kind": "model", "config": {"model": "llm"}},
             {"id": "m2", "kind": "model", "config": {"model": "llm"}},
             {"id": "side", "kind": "prompt", "config": {"template": "{input}!"}},
             {"id": "output", "kind": "output"}]
    edges = [{"from": "input", "to": "p"}, {"from": "p", "to": "m1"},
             {"from": "m1", "to": "m2"}, {"from": "m2", "to": "output"},
             {"from": "input", "to": "side"}]
    if extra:
        edges.append({"from": "side", "to": "m2"})
    return normalize({"schema_version": 2, "nodes": nodes, "edges": edges}).graph


def test_from_a_node_it_and_everything_after_it_run_again() -> None:
    assert downstream(doc(), "m1") == {"m1", "m2", "output"}
    assert downstream(doc(), "output") == {"output"}
    assert upstream(doc(), "m2") == {"m2", "m1", "p", "input"}


def test_an_unchanged_graph_lets_every_node_repeat() -> None:
    assert changed_upstream(doc(), doc(), ["input", "p", "m1", "side"]) == {}


def test_a_changed_setting_names_itself_for_every_node_after_it() -> None:
    found = changed_upstream(doc(), doc("Tell me {input}"), ["input", "p", "m1", "side"])
    assert found == {"p": ["p"], "m1": ["p"]}


def test_a_new_inbound_edge_is_a_change_of_its_target() -> None:
    found = changed_upstream(doc(), doc(extra=True), ["input", "p", "m1", "m2", "side"])
    assert found == {"m2": ["m2"]}


def test_a_layout_change_is_no_change() -> None:
    moved = doc()
    moved["nodes"][1] = {**moved["nodes"][1], "x": 500, "name": "Prompt"}
    assert changed_upstream(doc(), moved, ["p", "m1"]) == {}
