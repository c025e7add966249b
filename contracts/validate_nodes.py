"""Node checks: field types, ids, kinds, node counts and the single input/output rule.

Each node that has a string id becomes a NodeView, even when other fields are wrong,
so that edges pointing at it are not also reported as unknown. Config checks live in
validate_config.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from contracts.issues import Issue, error, quote, warning
from contracts.normalize import build_node
from contracts.registry import COMPONENTS, LIMITS, Component
from contracts.validate_config import check_config

NODE_ID: Final = re.compile(r"[a-z][a-z0-9-]{0,62}")
# Optional layout fields and the JSON types they may have (null means absent).
_LAYOUT_TYPES: Final[dict[str, tuple[type, ...]]] = {
    "name": (str,),
    "group": (str,),
    "x": (int, float),
    "y": (int, float),
}


# Not frozen: a frozen dataclass is several times slower to build, and these are
# internal values that nothing mutates.
@dataclass(slots=True)
class NodeView:
    """A node as the other checks see it: config already normalized (v1 migrated)."""

    index: int
    id: str
    kind: str | None
    component: Component | None
    config: dict[str, Any]
    # The normalized node, or None when the node cannot be normalized.
    normalized: dict[str, Any] | None


@dataclass
class NodeResult:
    views: list[NodeView]
    by_id: dict[str, NodeView]
    # Every node normalized: the graph (and its hash) can be built.
    complete: bool


def check_nodes(nodes: list[Any], version: int, issues: list[Issue]) -> NodeResult:
    """Check each node in order; whole-graph node rules are in check_node_counts."""
    result = NodeResult([], {}, True)
    for index, node in enumerate(nodes):
        view = _check_node(index, node, version, issues)
        if view is None or view.normalized is None:
            result.complete = False
        if view is None:
            continue
        if view.id in result.by_id:
            first = result.by_id[view.id].index
            issues.append(error(
                "duplicate_node_id",
                f"Node id {quote(view.id)} is already used by nodes.{first}.",
                f"nodes.{index}.id",
                view.id,
            ))
        else:
            result.by_id[view.id] = view
        result.views.append(view)
    return result


def check_node_counts(count: int, views: list[NodeView]) -> list[Issue]:
    """2-100 nodes, and exactly one input and one output."""
    issues: list[Issue] = []
    _check_count(count, issues)
    _check_terminal(views, "input", issues)
    _check_terminal(views, "output", issues)
    return issues


def _check_node(index: int, node: Any, version: int, issues: list[Issue]) -> NodeView | None:
    path = f"nodes.{index}"
    if not isinstance(node, dict):
        issues.append(error("wrong_type", "A node must be an object.", path))
        return None
    node_id = _string_field(node, "id", path, issues)
    if node_id is not None:
        _check_id(node_id, path, issues)
    kind = _string_field(node, "kind", path, issues, node_id)
    component = _component(kind, path, issues, node_id)
    _check_layout(node, path, issues, node_id)
    config = node.get("config")
    config_ok = config is None or isinstance(config, dict)
    if not config_ok:
        issues.append(error("wrong_type", "config must be an object.", f"{path}.config", node_id))
    if node_id is None:
        return None
    if kind is None or not config_ok:
        return NodeView(index, node_id, kind, component, {}, None)
    normalized = build_node(node, node_id, kind, config, index, version, issues)
    view = NodeView(index, node_id, kind, component, normalized["config"], normalized)
    if component is not None:
        check_config(index, node_id, component, config or {}, view.config, issues)
        _check_side_effects(view, component, issues)
    return view


def _check_id(node_id: str, path: str, issues: list[Issue]) -> None:
    # fullmatch: with match(), "$" would also accept a trailing newline.
    if not NODE_ID.fullmatch(node_id):
        issues.append(error(
            "invalid_node_id",
            f"Node id {quote(node_id)} must start with a lower-case letter and use only a-z, "
            "0-9 and '-' (at most 63 characters).",
            f"{path}.id",
            node_id,
        ))


def _component(
    kind: str | None, path: str, issues: list[Issue], node_id: str | None
) -> Component | None:
    if kind is None:
        return None
    component = COMPONENTS.get(kind)
    if component is None:
        issues.append(error(
            "unknown_kind", f"There is no component kind {quote(kind)}.", f"{path}.kind", node_id
        ))
    return component


def _string_field(
    node: dict[str, Any], key: str, path: str, issues: list[Issue], node_id: str | None = None
) -> str | None:
    value = node.get(key)
    if isinstance(value, str):
        return value
    if value is None:
        issues.append(error("missing_field", f"A node needs {key!r}.", f"{path}.{key}", node_id))
    else:
        issues.append(error("wrong_type", f"{key} must be a string.", f"{path}.{key}", node_id))
    return None


def _check_layout(
    node: dict[str, Any], path: str, issues: list[Issue], node_id: str | None
) -> None:
    for key, types in _LAYOUT_TYPES.items():
        value = node.get(key)
        # type(), not isinstance(): bool is an int in Python, but `true` is not a
        # coordinate.
        if value is not None and type(value) not in types:
            kind = "a string" if types == (str,) else "a number"
            issues.append(error("wrong_type", f"{key} must be {kind}.", f"{path}.{key}", node_id))


def _check_side_effects(view: NodeView, component: Component, issues: list[Issue]) -> None:
    if component.side_effects:
        issues.append(warning(
            "side_effects",
            f"{component.label} node {quote(view.id)} has side effects: playground runs and "
            "evaluations execute it only with allow_side_effects.",
            f"nodes.{view.index}",
            view.id,
        ))


def _check_count(count: int, issues: list[Issue]) -> None:
    if count < LIMITS["min_nodes"]:
        issues.append(error(
            "too_few_nodes", f"A graph needs at least {LIMITS['min_nodes']} nodes; it has {count}."
        ))
    elif count > LIMITS["max_nodes"]:
        issues.append(error(
            "too_many_nodes", f"A graph has at most {LIMITS['max_nodes']} nodes; it has {count}."
        ))


def _check_terminal(views: list[NodeView], kind: str, issues: list[Issue]) -> None:
    """Exactly one input and one output: every extra one is reported where it is."""
    found = [v for v in views if v.kind == kind]
    if not found:
        issues.append(error(f"missing_{kind}", f"The graph needs one {kind} node."))
        return
    names = ", ".join(quote(v.id) for v in found[:5])
    for extra in found[1:]:
        issues.append(error(
            f"multiple_{kind}s",
            f"The graph has {len(found)} {kind} nodes ({names}); keep exactly one.",
            f"nodes.{extra.index}.kind",
            extra.id,
        ))
