"""Normalization: version 1 migration, default edge ports and default settings.

Stored revisions are never rewritten; this runs on read. A document that is too
malformed to normalize (nodes that are not objects with string id/kind, and so on)
raises NotNormalizable; the validator reports why.

`null` counts as absent everywhere an optional field may be left out (config, edge
ports, settings values), so a canvas that serializes "unset" as null is not punished.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from contracts.issues import Issue, warning
from contracts.registry import COMPONENTS, SETTINGS_RANGES

SUPPORTED_VERSIONS = (1, 2)
MEMORY_STRATEGIES = ("window", "none")
# Node fields that are kept for the canvas but carry no behaviour.
LAYOUT_FIELDS = ("name", "x", "y", "group")


class NotNormalizable(ValueError):
    pass


@dataclass
class Normalized:
    graph: dict[str, Any]
    source_version: int
    warnings: list[Issue] = field(default_factory=list)


def schema_version(doc: dict[str, Any]) -> Any:
    """A body without schema_version is version 1 (decisions.md)."""
    return doc.get("schema_version", 1)


def is_supported_version(version: Any) -> bool:
    # bool is an int subclass in Python; `true` is not a schema version.
    return type(version) is int and version in SUPPORTED_VERSIONS


def normalize(doc: Any) -> Normalized:
    if not isinstance(doc, dict):
        raise NotNormalizable("the graph is not a JSON object")
    version = schema_version(doc)
    if not is_supported_version(version):
        raise NotNormalizable(f"schema_version {version!r} is not supported")
    nodes, edges = doc.get("nodes"), doc.get("edges")
    if not isinstance(nodes, list) or not isinstance(edges, list):
        raise NotNormalizable("nodes and edges must be arrays")
    result = Normalized({}, version)
    norm_nodes = [normalize_node(n, i, version, result.warnings) for i, n in enumerate(nodes)]
    kinds = node_kinds(norm_nodes)
    result.graph = assemble(
        doc, norm_nodes, [normalize_edge(e, kinds) for e in edges], normalize_settings(doc)
    )
    if version == 1:
        result.warnings.insert(0, migrated_warning())
    return result


def migrated_warning() -> Issue:
    return warning("migrated_from_v1", "This version 1 draft was migrated to version 2 on read.")


def assemble(
    doc: dict[str, Any],
    nodes: list[dict[str, Any]],
    edges: list[dict[str, Any]],
    settings: dict[str, Any],
) -> dict[str, Any]:
    """The normalized document from its already-normalized parts."""
    name = doc.get("name")
    return {
        "schema_version": 2,
        "name": name if isinstance(name, str) else "",
        "nodes": nodes,
        "edges": edges,
        "settings": settings,
    }


def node_kinds(nodes: list[dict[str, Any]]) -> dict[str, str]:
    """id → kind; with duplicate ids the first node wins (as in the validator)."""
    kinds: dict[str, str] = {}
    for node in nodes:
        kinds.setdefault(node["id"], node["kind"])
    return kinds


def normalize_node(
    node: Any, index: int, version: int, warnings: list[Issue]
) -> dict[str, Any]:
    if not isinstance(node, dict):
        raise NotNormalizable(f"nodes.{index} is not an object")
    node_id, kind = node.get("id"), node.get("kind")
    if not isinstance(node_id, str) or not isinstance(kind, str):
        raise NotNormalizable(f"nodes.{index} needs string id and kind")
    config = node.get("config")
    if config is not None and not isinstance(config, dict):
        raise NotNormalizable(f"nodes.{index}.config is not an object")
    return build_node(node, node_id, kind, config, index, version, warnings)


def build_node(
    node: dict[str, Any],
    node_id: str,
    kind: str,
    config: dict[str, Any] | None,
    index: int,
    version: int,
    warnings: list[Issue],
) -> dict[str, Any]:
    """normalize_node for a node whose id, kind and config have been checked."""
    config = dict(config) if config else {}
    if kind == "model" and config.get("model") in (None, ""):
        config["model"] = "llm"
    if version == 1 and kind == "memory":
        _coerce_v1_strategy(config, index, node_id, warnings)
    out: dict[str, Any] = {"id": node_id, "kind": kind}
    for key in LAYOUT_FIELDS:
        if key in node:
            out[key] = node[key]
    out["config"] = config
    return out


def _coerce_v1_strategy(
    config: dict[str, Any], index: int, node_id: str, warnings: list[Issue]
) -> None:
    # Version 1 let people type any strategy; it always ran as a window.
    strategy = config.get("strategy")
    if isinstance(strategy, str) and strategy not in MEMORY_STRATEGIES and strategy != "":
        config["strategy"] = "window"
        shown = strategy if len(strategy) <= 40 else strategy[:40] + "…"
        warnings.append(
            warning(
                "memory_strategy_coerced",
                f"Memory strategy {shown!r} is free text; it runs as 'window'.",
                f"nodes.{index}.config.strategy",
                node_id,
            )
        )


def normalize_edge(edge: Any, kinds: dict[str, str]) -> dict[str, Any]:
    if not isinstance(edge, dict):
        raise NotNormalizable("an edge is not an object")
    src, dst = edge.get("from"), edge.get("to")
    if not isinstance(src, str) or not isinstance(dst, str):
        raise NotNormalizable("edges need string from and to")
    from_port, to_port = edge.get("from_port"), edge.get("to_port")
    if from_port in (None, ""):
        comp = COMPONENTS.get(kinds.get(src, ""))
        from_port = (comp.default_output if comp else None) or "out"
    if to_port in (None, ""):
        comp = COMPONENTS.get(kinds.get(dst, ""))
        to_port = (comp.default_input if comp else None) or "in"
    if not isinstance(from_port, str) or not isinstance(to_port, str):
        raise NotNormalizable("edge ports must be strings")
    return {"from": src, "to": dst, "from_port": from_port, "to_port": to_port}


def normalize_settings(doc: dict[str, Any]) -> dict[str, Any]:
    """The three settings with defaults filled in; unknown keys are dropped."""
    settings = doc.get("settings")
    given = settings if isinstance(settings, dict) else {}
    return {
        name: given[name] if given.get(name) is not None else default
        for name, (_lo, _hi, default) in SETTINGS_RANGES.items()
    }

