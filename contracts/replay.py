"""Re-running a graph from one of its nodes: which nodes run again, which may repeat a
recorded outcome, and which of those a changed graph no longer allows.

Pure functions of normalized graphs (contracts.normalize); the gateway's re-run
(runs/replay.py) calls them with the recorded run's graph and the graph to run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

Shape = tuple[str, tuple[tuple[str, Any], ...], tuple[tuple[str, str, str], ...]]


def downstream(graph: dict[str, Any], node_id: str) -> set[str]:
    """`node_id` and every node a path of edges leads to from it: these run again."""
    targets = _targets(graph)
    seen = {node_id}
    todo = [node_id]
    while todo:
        for target in targets.get(todo.pop(), ()):
            if target not in seen:
                seen.add(target)
                todo.append(target)
    return seen


def upstream(graph: dict[str, Any], node_id: str) -> set[str]:
    """`node_id` and every node it depends on (a path of edges leads from it to the node)."""
    sources: dict[str, list[str]] = {}
    for edge in graph["edges"]:
        sources.setdefault(edge["to"], []).append(edge["from"])
    seen = {node_id}
    todo = [node_id]
    while todo:
        for source in sources.get(todo.pop(), ()):
            if source not in seen:
                seen.add(source)
                todo.append(source)
    return seen


def changed_upstream(recorded: dict[str, Any], current: dict[str, Any],
                     nodes: Iterable[str]) -> dict[str, list[str]]:
    """For each of `nodes` (to repeat its outcome recorded under the `recorded` graph in
    the `current` one): the nodes, itself included, of its upstream in `current` whose
    kind, settings or inbound edges differ from `recorded`'s. Only nodes with such a
    change are listed: an empty answer means every one of `nodes` may be repeated."""
    before, after = _shapes(recorded), _shapes(current)
    changed = {node for node, shape in after.items() if before.get(node) != shape}
    found: dict[str, list[str]] = {}
    for node in nodes:
        culprits = sorted(upstream(current, node) & changed)
        if culprits:
            found[node] = culprits
    return found


def _targets(graph: dict[str, Any]) -> dict[str, list[str]]:
    targets: dict[str, list[str]] = {}
    for edge in graph["edges"]:
        targets.setdefault(edge["from"], []).append(edge["to"])
    return targets


def _shapes(graph: dict[str, Any]) -> dict[str, Shape]:
    """What decides a node's outcome besides its inputs: kind, settings (an empty one is
    the default, as in contracts.hashing) and its inbound edges with their ports."""
    inbound: dict[str, list[tuple[str, str, str]]] = {}
    for edge in graph["edges"]:
        inbound.setdefault(edge["to"], []).append(
            (str(edge["from"]), str(edge.get("from_port") or ""), str(edge.get("to_port") or "")))
    shapes: dict[str, Shape] = {}
    for node in graph["nodes"]:
        config = node.get("config") or {}
        settings = tuple(sorted((k, v) for k, v in config.items() if v != ""))
        shapes[node["id"]] = (node["kind"], settings, tuple(sorted(inbound.get(node["id"], []))))
    return shapes
