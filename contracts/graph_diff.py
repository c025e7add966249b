"""What changed between two normalized graphs: nodes, edges and settings added, removed
and changed, and whether the behaviour hash changed (a cosmetic edit leaves it).

    diff = graph_diff(before, after)
    diff["behaviour_changed"]       # False: only names, positions or groups moved
    diff["nodes"]["changed"][0]     # {"id", "changes": [{"field", "before", "after",
                                    #   "cosmetic"}]}

Pure: the gateway's revision and version diffs (designs/diff.py) call it.
"""

from __future__ import annotations

from typing import Any

from contracts.hashing import content_sha256
from contracts.normalize import LAYOUT_FIELDS

Edge = tuple[str, str, str, str]


def graph_diff(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    old = {n["id"]: n for n in before["nodes"]}
    new = {n["id"]: n for n in after["nodes"]}
    changed = []
    for node_id in sorted(old.keys() & new.keys()):
        changes = _node_changes(old[node_id], new[node_id])
        if changes:
            changed.append({"id": node_id, "changes": changes})
    old_edges, new_edges = _edges(before), _edges(after)
    old_hash, new_hash = content_sha256(before), content_sha256(after)
    return {
        "nodes": {"added": [_node(new[n]) for n in sorted(new.keys() - old.keys())],
                  "removed": [_node(old[n]) for n in sorted(old.keys() - new.keys())],
                  "changed": changed},
        "edges": {"added": [_edge(e) for e in sorted(new_edges - old_edges)],
                  "removed": [_edge(e) for e in sorted(old_edges - new_edges)]},
        "settings": _changes(before.get("settings") or {}, after.get("settings") or {},
                             "settings."),
        "from_sha256": old_hash,
        "to_sha256": new_hash,
        "behaviour_changed": old_hash != new_hash,
    }


def _node_changes(old: dict[str, Any], new: dict[str, Any]) -> list[dict[str, Any]]:
    changes = []
    if old.get("kind") != new.get("kind"):
        changes.append(_change("kind", old.get("kind"), new.get("kind")))
    changes += _changes(_config(old), _config(new), "config.")
    for name in LAYOUT_FIELDS:
        if old.get(name) != new.get(name):
            changes.append(_change(name, old.get(name), new.get(name), cosmetic=True))
    return changes


def _config(node: dict[str, Any]) -> dict[str, Any]:
    """An empty setting is its default (contracts.hashing): it is not a change."""
    return {k: v for k, v in (node.get("config") or {}).items() if v != ""}


def _changes(old: dict[str, Any], new: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    return [_change(prefix + key, old.get(key), new.get(key))
            for key in sorted(old.keys() | new.keys()) if old.get(key) != new.get(key)]


def _change(field: str, before: Any, after: Any, *, cosmetic: bool = False) -> dict[str, Any]:
    return {"field": field, "before": before, "after": after, "cosmetic": cosmetic}


def _node(node: dict[str, Any]) -> dict[str, Any]:
    return {"id": node["id"], "kind": node.get("kind"), "config": _config(node)}


def _edges(graph: dict[str, Any]) -> set[Edge]:
    return {(str(e["from"]), str(e.get("from_port") or ""), str(e["to"]),
             str(e.get("to_port") or "")) for e in graph["edges"]}


def _edge(edge: Edge) -> dict[str, str]:
    return {"from": edge[0], "from_port": edge[1], "to": edge[2], "to_port": edge[3]}
