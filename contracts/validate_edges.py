"""Edge checks: fields, endpoints, ports, port types and duplicates.

Ports are resolved exactly as normalization resolves them (the source's first
output, `true` for a condition; the target's `in`), so a default port that does not
exist is reported at the port's path even though the document left it out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from contracts.conversions import target_type
from contracts.issues import Issue, error, quote
from contracts.normalize import normalize_edge
from contracts.registry import LIMITS
from contracts.validate_nodes import NodeView

_MAX_EDGES: Final = LIMITS["max_edges"]


@dataclass(frozen=True)
class EdgeView:
    """An edge whose two ends are nodes of the graph, ports resolved."""

    index: int
    source: str
    target: str
    from_port: str
    to_port: str


@dataclass
class EdgeResult:
    views: list[EdgeView]
    normalized: list[dict[str, Any]]
    # Every edge normalized: the graph (and its hash) can be built.
    complete: bool


def check_edges(
    edges: list[Any], nodes: dict[str, NodeView], issues: list[Issue]
) -> EdgeResult:
    if len(edges) > _MAX_EDGES:
        issues.append(error(
            "too_many_edges", f"A graph has at most {_MAX_EDGES} edges; it has {len(edges)}."
        ))
    kinds = {node_id: view.kind or "" for node_id, view in nodes.items()}
    result = EdgeResult([], [], True)
    seen: dict[tuple[str, str, str, str], int] = {}
    for index, edge in enumerate(edges):
        if not _check_fields(index, edge, issues):
            result.complete = False
            continue
        norm = normalize_edge(edge, kinds)
        result.normalized.append(norm)
        view = _check_edge(index, norm, nodes, issues)
        if view is not None:
            result.views.append(view)
        key = (norm["from"], norm["from_port"], norm["to"], norm["to_port"])
        if key in seen:
            issues.append(error(
                "duplicate_edge",
                f"This edge repeats edges.{seen[key]} "
                f"({quote(key[0])}.{quote(key[1])} → {quote(key[2])}.{quote(key[3])}).",
                f"edges.{index}",
            ))
        else:
            seen[key] = index
    return result


def _check_fields(index: int, edge: Any, issues: list[Issue]) -> bool:
    """Report missing or mistyped fields; False when the edge cannot be normalized."""
    path = f"edges.{index}"
    if not isinstance(edge, dict):
        issues.append(error("wrong_type", "An edge must be an object.", path))
        return False
    ok = True
    for key in ("from", "to"):
        value = edge.get(key)
        if value is None:
            issues.append(error("missing_field", f"An edge needs {key!r}.", f"{path}.{key}"))
            ok = False
        elif not isinstance(value, str):
            issues.append(error("wrong_type", f"{key} must be a string.", f"{path}.{key}"))
            ok = False
    for key in ("from_port", "to_port"):
        value = edge.get(key)
        if value is not None and not isinstance(value, str):
            issues.append(error("wrong_type", f"{key} must be a string.", f"{path}.{key}"))
            ok = False
    return ok


def _check_edge(
    index: int, edge: dict[str, Any], nodes: dict[str, NodeView], issues: list[Issue]
) -> EdgeView | None:
    path = f"edges.{index}"
    source, target = nodes.get(edge["from"]), nodes.get(edge["to"])
    if source is None:
        issues.append(error(
            "unknown_edge_source", f"No node has the id {quote(edge['from'])}.", f"{path}.from"
        ))
    if target is None:
        issues.append(error(
            "unknown_edge_target", f"No node has the id {quote(edge['to'])}.", f"{path}.to"
        ))
    out_ok = source is not None and _check_from_port(path, source, edge["from_port"], issues)
    in_ok = target is not None and _check_to_port(path, target, edge["to_port"], issues)
    if source is None or target is None or not (out_ok and in_ok):
        # A wire that cannot carry anything takes no part in the graph checks.
        return None
    _check_types(path, source, edge["from_port"], target, issues)
    return EdgeView(index, source.id, target.id, edge["from_port"], edge["to_port"])


def _check_from_port(path: str, source: NodeView, port: str, issues: list[Issue]) -> bool:
    """False when the port was reported; True also when the kind is unknown."""
    comp = source.component
    if comp is None:
        return True  # unknown_kind already said what is wrong
    if comp.output(port) is None:
        ports = ", ".join(p.name for p in comp.outputs) or "none"
        issues.append(error(
            "unknown_port",
            f"{comp.label} node {quote(source.id)} has no output {quote(port)}; "
            f"its outputs: {ports}.",
            f"{path}.from_port",
            source.id,
        ))
        return False
    # A router fires route_N only when route_N has a condition.
    if comp.kind == "router" and port.startswith("route_") and not source.config.get(port):
        issues.append(error(
            "unknown_port",
            f"Router {quote(source.id)} has no condition for {port}; configure it first.",
            f"{path}.from_port",
            source.id,
        ))
        return False
    return True


def _check_to_port(path: str, target: NodeView, port: str, issues: list[Issue]) -> bool:
    comp = target.component
    if comp is None:
        return True
    if not comp.inputs:
        issues.append(error(
            "unknown_port",
            f"{comp.label} node {quote(target.id)} takes no inbound edges.",
            f"{path}.to_port",
            target.id,
        ))
        return False
    if all(p.name != port for p in comp.inputs):
        issues.append(error(
            "unknown_port",
            f"{comp.label} node {quote(target.id)} has no input {quote(port)}; its input is 'in'.",
            f"{path}.to_port",
            target.id,
        ))
        return False
    return True


def _check_types(
    path: str, source: NodeView, port: str, target: NodeView, issues: list[Issue]
) -> None:
    if source.component is None or target.component is None:
        return
    out = source.component.output(port)
    accepted = target.component.input_types
    if out is not None and target_type(out.types[0], accepted) is None:
        issues.append(error(
            "incompatible_types",
            f"{quote(source.id)}.{port} sends {out.types[0]}, which {quote(target.id)} cannot "
            f"take (it accepts {', '.join(accepted)}; no conversion applies).",
            path,
            target.id,
        ))
