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
from contracts.registry import COMPONENTS, LIMITS
from contracts.types import ALL_TYPES, PortType
from contracts.validate_nodes import NodeView

_MAX_EDGES: Final = LIMITS["max_edges"]
# Looked up for every edge, so built once: kind → output port → its type, and
# kind → input port names.
_OUTPUTS: Final[dict[str, dict[str, PortType]]] = {
    kind: {p.name: p.types[0] for p in comp.outputs} for kind, comp in COMPONENTS.items()
}
_INPUTS: Final[dict[str, frozenset[str]]] = {
    kind: frozenset(p.name for p in comp.inputs) for kind, comp in COMPONENTS.items()
}
# (target kind, type sent) → does a value arrive (as is, or by one conversion)?
_ACCEPTS: Final[dict[tuple[str, PortType], bool]] = {
    (kind, sent): target_type(sent, comp.input_types) is not None
    for kind, comp in COMPONENTS.items()
    for sent in ALL_TYPES
}


# Not frozen: a frozen dataclass is several times slower to build, and these are
# internal values that nothing mutates.
@dataclass(slots=True)
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


def check_edge_count(count: int) -> list[Issue]:
    if count <= _MAX_EDGES:
        return []
    return [error("too_many_edges", f"A graph has at most {_MAX_EDGES} edges; it has {count}.")]


def check_edges(
    edges: list[Any], nodes: dict[str, NodeView], issues: list[Issue]
) -> EdgeResult:
    """Check each edge in order; the edge count is check_edge_count's."""
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
    if isinstance(edge, dict) and _well_typed(edge):
        return True
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


def _well_typed(edge: dict[str, Any]) -> bool:
    """The common case, decided without building paths."""
    from_port, to_port = edge.get("from_port"), edge.get("to_port")
    return (
        isinstance(edge.get("from"), str)
        and isinstance(edge.get("to"), str)
        and (from_port is None or isinstance(from_port, str))
        and (to_port is None or isinstance(to_port, str))
    )


def _check_edge(
    index: int, edge: dict[str, Any], nodes: dict[str, NodeView], issues: list[Issue]
) -> EdgeView | None:
    source, target = nodes.get(edge["from"]), nodes.get(edge["to"])
    if source is None:
        issues.append(error(
            "unknown_edge_source",
            f"No node has the id {quote(edge['from'])}.",
            f"edges.{index}.from",
        ))
    if target is None:
        issues.append(error(
            "unknown_edge_target", f"No node has the id {quote(edge['to'])}.", f"edges.{index}.to"
        ))
    from_port, to_port = edge["from_port"], edge["to_port"]
    out_ok = source is not None and _check_from_port(index, source, from_port, issues)
    in_ok = target is not None and _check_to_port(index, target, to_port, issues)
    if source is None or target is None or not (out_ok and in_ok):
        # A wire that cannot carry anything takes no part in the graph checks.
        return None
    _check_types(index, source, from_port, target, issues)
    return EdgeView(index, source.id, target.id, from_port, to_port)


def _check_from_port(index: int, source: NodeView, port: str, issues: list[Issue]) -> bool:
    """False when the port was reported; True also when the kind is unknown."""
    comp = source.component
    if comp is None:
        return True  # unknown_kind already said what is wrong
    if port not in _OUTPUTS[comp.kind]:
        ports = ", ".join(p.name for p in comp.outputs) or "none"
        issues.append(error(
            "unknown_port",
            f"{comp.label} node {quote(source.id)} has no output {quote(port)}; "
            f"its outputs: {ports}.",
            f"edges.{index}.from_port",
            source.id,
        ))
        return False
    # A router fires route_N only when route_N has a condition.
    if comp.kind == "router" and port.startswith("route_") and not source.config.get(port):
        issues.append(error(
            "unknown_port",
            f"Router {quote(source.id)} has no condition for {port}; configure it first.",
            f"edges.{index}.from_port",
            source.id,
        ))
        return False
    return True


def _check_to_port(index: int, target: NodeView, port: str, issues: list[Issue]) -> bool:
    comp = target.component
    if comp is None or port in _INPUTS[comp.kind]:
        return True
    if comp.inputs:
        message = f"has no input {quote(port)}; its input is 'in'."
    else:
        message = "takes no inbound edges."
    issues.append(error(
        "unknown_port",
        f"{comp.label} node {quote(target.id)} {message}",
        f"edges.{index}.to_port",
        target.id,
    ))
    return False


def _check_types(
    index: int, source: NodeView, port: str, target: NodeView, issues: list[Issue]
) -> None:
    if source.component is None or target.component is None:
        return
    sent = _OUTPUTS[source.component.kind][port]
    if _ACCEPTS[target.component.kind, sent]:
        return
    accepted = ", ".join(target.component.input_types)
    issues.append(error(
        "incompatible_types",
        f"{quote(source.id)}.{port} sends {sent}, which {quote(target.id)} cannot take "
        f"(it accepts {accepted}; no conversion applies).",
        f"edges.{index}",
        target.id,
    ))
