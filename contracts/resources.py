"""Resource checks: do the IDs a graph names exist in the caller's project?

The contracts cannot see the database, so the gateway passes a ResourceCheck scoped
to the project. Missing IDs and IDs of another project get the same issue and the
same message, so validation never tells anyone what exists elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final, Protocol

from contracts.issues import Issue, error, quote
from contracts.registry import COMPONENTS, LIMITS, ResourceKind
from contracts.validate_nodes import NodeView

# The platform chat model: always there, nothing to look up.
PLATFORM_MODEL: Final = "llm"

_NAMES: Final[dict[str, str]] = {
    "model": "Model",
    "function": "Tool",
    "connection": "API connection",
    "knowledge_base": "Knowledge base",
    "dataset": "Dataset",
    "version": "Published version",
}


class ResourceCheck(Protocol):
    """What the validator needs from the gateway: one yes/no per resource ID."""

    def exists(self, kind: ResourceKind, resource_id: str) -> bool:
        """True when `resource_id` of `kind` exists in the project and may be used."""
        ...


class StaticResources:
    """A ResourceCheck over a fixed set of IDs, for tests and fixtures."""

    def __init__(self, ids: Mapping[str, Iterable[str]] | None = None) -> None:
        self._ids = {kind: frozenset(values) for kind, values in (ids or {}).items()}

    def exists(self, kind: ResourceKind, resource_id: str) -> bool:
        return resource_id in self._ids.get(kind, frozenset())


def check_resources(
    nodes: list[NodeView], resources: ResourceCheck, issues: list[Issue]
) -> None:
    # Ask about each (kind, id) once, however many nodes name it.
    answers: dict[tuple[ResourceKind, str], bool] = {}
    for view in nodes:
        if view.component is None:
            continue
        for setting in view.component.settings:
            kind = setting.resource
            value = view.config.get(setting.name)
            if kind is None or not isinstance(value, str) or not _is_lookup(kind, value):
                continue
            key = (kind, value)
            if key not in answers:
                answers[key] = bool(resources.exists(kind, value))
            if not answers[key]:
                issues.append(_missing(kind, value, view, setting.name))


def _is_lookup(kind: ResourceKind, value: str) -> bool:
    # Empty and over-long values were already reported; do not query them.
    if value == "":
        return False
    if len(value) > LIMITS["max_config_value_chars"]:
        return False
    return not (kind == "model" and value == PLATFORM_MODEL)


def _missing(kind: ResourceKind, value: str, view: NodeView, name: str) -> Issue:
    code = "unknown_version" if kind == "version" else "unknown_resource"
    return error(
        code,
        f"{_NAMES[kind]} {quote(value)} does not exist in this project, or you cannot use it.",
        f"nodes.{view.index}.config.{name}",
        view.id,
    )


def graph_resources(graph: Mapping[str, Any]) -> dict[str, list[str]]:
    """The resource IDs a normalized graph names, per kind, sorted; the platform model
    is left out (it is no resource). What a run of the graph may call and nothing more:
    the gateway scopes the run's credential to it. IDs are stripped as the runner
    strips them before calling."""
    found: dict[str, set[str]] = {}
    nodes = graph.get("nodes")
    for node in nodes if isinstance(nodes, list) else []:
        component = COMPONENTS.get(str(node.get("kind"))) if isinstance(node, dict) else None
        config = node.get("config") if component is not None else None
        if component is None or not isinstance(config, dict):
            continue
        for setting in component.settings:
            value = config.get(setting.name)
            if setting.resource is None or not isinstance(value, str):
                continue
            value = value.strip()
            if value and not (setting.resource == "model" and value == PLATFORM_MODEL):
                found.setdefault(setting.resource, set()).add(value)
    return {kind: sorted(ids) for kind, ids in sorted(found.items())}
