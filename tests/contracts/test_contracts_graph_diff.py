"""Diffs of normalized graphs: what was added, removed and changed, and whether the
behaviour hash moved (a cosmetic edit says so)."""

from __future__ import annotations

import copy
from typing import Any

from contracts.graph_diff import graph_diff
from contracts.normalize import normalize


def doc(**changes: Any) -> dict[str, Any]:
    graph = {"schema_version": 2, "nodes": [
        {"id": "input", "kind": "input", "x": 0, "y": 0},
        {"id": "p", "kind": "prompt", "name": "Ask", "config": {"template": "Say {input}"}},
        {"id": "output", "kind": "output"}],
        "edges": [{"from": "input", "to": "p"}, {"from": "p", "to": "output"}],
        "settings": {"max_steps": 10}}
    graph.update(changes)
    return normalize(graph).graph


def test_the_same_graph_has_no_change() -> None:
    diff = graph_diff(doc(), doc())
    assert diff["nodes"] == {"added": [], "removed": [], "changed": []}
    assert diff["edges"] == {"added": [], "removed": []} and diff["settings"] == []
    assert diff["behaviour_changed"] is False and diff["from_sha256"] == diff["to_sha256"]


def test_a_cosmetic_edit_says_so() -> None:
    after = doc()
    after["nodes"][1]["name"], after["nodes"][0]["x"] = "Ask nicely", 300
    diff = graph_diff(doc(), after)
    changes = {c["field"]: (c["before"], c["after"], c["cosmetic"])
               for n in diff["nodes"]["changed"] for c in n["changes"]}
    assert changes == {"name": ("Ask", "Ask nicely", True), "x": (0, 300, True)}
    assert diff["behaviour_changed"] is False


def test_nodes_edges_and_settings_added_removed_and_changed() -> None:
    before = doc()
    after = copy.deepcopy(before)
    after["nodes"][1]["config"]["template"] = "Tell {input}"
    after["nodes"].insert(2, {"id": "m", "kind": "model", "config": {"model": "llm"}})
    after["edges"] = [e for e in after["edges"] if e["from"] != "p"]
    after["edges"] += [{"from": "p", "to": "m", "from_port": "out", "to_port": "in"},
                       {"from": "m", "to": "output", "from_port": "out", "to_port": "in"}]
    after["settings"]["max_steps"] = 20
    diff = graph_diff(before, after)
    assert [n["id"] for n in diff["nodes"]["added"]] == ["m"]
    assert diff["nodes"]["removed"] == []
    assert diff["nodes"]["changed"] == [{"id": "p", "changes": [
        {"field": "config.template", "before": "Say {input}", "after": "Tell {input}",
         "cosmetic": False}]}]
    assert [(e["from"], e["to"]) for e in diff["edges"]["added"]] == [("m", "output"),
                                                                     ("p", "m")]
    assert [(e["from"], e["to"]) for e in diff["edges"]["removed"]] == [("p", "output")]
    assert [(c["field"], c["before"], c["after"]) for c in diff["settings"]] == [
        ("settings.max_steps", 10, 20)]
    assert diff["behaviour_changed"] is True
    back = graph_diff(after, before)
    assert [n["id"] for n in back["nodes"]["removed"]] == ["m"]
