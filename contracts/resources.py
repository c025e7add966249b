"""Resource checks: do the IDs a graph names exist in the caller's project?

The contracts cannot see the database, so the gateway passes a ResourceCheck scoped
to the project. Missing IDs and IDs of another project get the same issue and the
same message, so validation never tells anyone what exists elsewhere.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from contracts.issues import Issue, error, quote
from contracts.registry import COMPONENTS, LIMITS, Component, ResourceKind
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


@dataclass(frozen=True, slots=True)
class ResourceRef:
    """One resource ID a node's config names, and where (for the issue)."""

    kind: ResourceKind
    value: str
    path: str
    node_id: str

    def to_list(self) -> list[str]:
        return [self.kind, self.value, self.path, self.node_id]

    @classmethod
    def from_list(cls, raw: list[str]) -> ResourceRef:
        kind, value, path, node_id = raw
        return cls(kind, value, path, node_id)  # type: ignore[arg-type]


def resource_refs(nodes: list[NodeView]) -> list[ResourceRef]:
    """The IDs to look up, in document order; the platform model and values already
    reported (empty, too long) are not looked up."""
    return [ResourceRef(kind, value, f"nodes.{view.index}.config.{name}", view.id)
            for view in nodes
            for kind, name, value in _named(view.component, view.config)
            if _is_lookup(kind, value)]


def _named(component: Component | None, config: Any) -> Iterator[tuple[ResourceKind, str, str]]:
    """(kind, setting, ID) for each resource setting of a node's config that holds text:
    the one walk behind both the validator's lookups and a run's scope."""
    if component is None or not isinstance(config, dict):
        return
    for setting in component.settings:
        value = config.get(setting.name)
        if setting.resource is not None and isinstance(value, str):
            yield setting.resource, setting.name, value


def missing_resources(refs: list[ResourceRef], resources: ResourceCheck) -> list[Issue]:
    """An issue per reference whose ID does not exist. With `existing_ids` (see
    BatchResourceCheck) one question per kind; else one per distinct (kind, ID)."""
    found = _existing(refs, resources)
    return [_missing(ref) for ref in refs if (ref.kind, ref.value) not in found]


class BatchResourceCheck(ResourceCheck, Protocol):
    """A ResourceCheck that can also answer for many IDs of one kind at once (the
    gateway's: one database query per kind instead of one per ID)."""

    def existing_ids(self, kind: ResourceKind, resource_ids: set[str]) -> set[str]:
        """The subset of `resource_ids` of `kind` that exist in the project."""
        ...


def _existing(refs: list[ResourceRef], resources: ResourceCheck) -> set[tuple[str, str]]:
    # dicts, not sets: without a batch the questions go in document order
    wanted: dict[ResourceKind, dict[str, None]] = {}
    for ref in refs:
        wanted.setdefault(ref.kind, {})[ref.value] = None
    batch = getattr(resources, "existing_ids", None)
    found: set[tuple[str, str]] = set()
    for kind, ids in wanted.items():
        if callable(batch):
            found.update((kind, value) for value in batch(kind, set(ids)))
        else:
            found.update((kind, value) for value in ids if resources.exists(kind, value))
    return found


def check_resources(
    nodes: list[NodeView], resources: ResourceCheck, issues: list[Issue]
) -> None:
    issues.extend(missing_resources(resource_refs(nodes), resources))


def _is_lookup(kind: ResourceKind, value: str) -> bool:
    # Empty and over-long values were already reported; do not query them.
    if value == "":
        return False
    if len(value) > LIMITS["max_config_value_chars"]:
        return False
    return not (kind == "model" and value == PLATFORM_MODEL)


def _missing(ref: ResourceRef) -> Issue:
    code = "unknown_version" if ref.kind == "version" else "unknown_resource"
    return error(
        code,
        f"{_NAMES[ref.kind]} {quote(ref.value)} does not exist in this project, "
        "or you cannot use it.",
        ref.path,
        ref.node_id,
    )


def graph_resources(graph: Mapping[str, Any]) -> dict[str, list[str]]:
    """The resource IDs a normalized graph names, per kind, sorted; the platform model
    is left out (it is no resource). What a run of the graph may call and nothing more:
    the gateway scopes the run's credential to it. IDs are stripped as the runner
    strips them before calling."""
    found: dict[str, set[str]] = {}
    nodes = graph.get("nodes")
    for node in nodes if isinstance(nodes, list) else []:
        if not isinstance(node, dict):
            continue
        for kind, _, value in _named(COMPONENTS.get(str(node.get("kind"))), node.get("config")):
            if _is_lookup(kind, value.strip()):
                found.setdefault(kind, set()).add(value.strip())
    return {kind: sorted(ids) for kind, ids in sorted(found.items())}
