"""Canonical JSON and content_sha256, exactly as shared/spec/content-hash.md fixes them."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

# A string parsed from JSON may hold an unpaired surrogate ("\ud800"), which UTF-8
# cannot encode. We write it as a lower-case \uXXXX escape, as JavaScript's
# JSON.stringify does, so hashing never fails and stays well defined.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, non-ASCII raw, U+2028/U+2029 escaped.

    Python's encoder already writes control characters as short escapes or lower-case
    \\u00xx and leaves <, >, & alone; only the two line separators need a fix-up.
    """
    # check_circular=False: values parsed from JSON cannot be circular, and skipping
    # the check makes large graphs measurably faster.
    text = json.dumps(
        value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), check_circular=False
    )
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def canonical_bytes(value: Any) -> bytes:
    """canonical_json as the UTF-8 bytes that get hashed."""
    text = canonical_json(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def behaviour_document(graph: dict[str, Any]) -> dict[str, Any]:
    """The part of a *normalized* graph that carries behaviour (what gets hashed).

    Key order does not matter (the encoder sorts keys), so dicts that already hold
    exactly what is hashed are shared rather than copied: graphs can be large.
    """
    nodes = []
    for node in graph["nodes"]:
        item: dict[str, Any] = {"id": node["id"], "kind": node["kind"]}
        config = node.get("config") or {}
        if "" in config.values():
            # An empty value means "use the default", so it does not change behaviour.
            config = {k: v for k, v in config.items() if v != ""}
        if config:
            item["config"] = config
        nodes.append(item)
    nodes.sort(key=_node_id)
    if len({n["id"] for n in nodes}) < len(nodes):
        # Duplicate ids (an invalid graph) would leave the order to the array; break
        # ties by content so that array order never changes the hash.
        nodes.sort(key=lambda n: (n["id"], canonical_json(n)))
    edges = [e if len(e) == 4 else {k: e[k] for k in _EDGE_KEYS} for e in graph["edges"]]
    edges.sort(key=_edge_order)
    return {"edges": edges, "nodes": nodes, "settings": dict(graph["settings"])}


_EDGE_KEYS = ("from", "to", "from_port", "to_port")


def _node_id(node: dict[str, Any]) -> Any:
    return node["id"]


def _edge_order(edge: dict[str, Any]) -> tuple[Any, ...]:
    return (edge["from"], edge["from_port"], edge["to"], edge["to_port"])


def canonical_behaviour(graph: dict[str, Any]) -> str:
    return canonical_bytes(behaviour_document(graph)).decode("utf-8")


def content_sha256(graph: dict[str, Any]) -> str:
    """The behaviour hash of a normalized graph."""
    return hashlib.sha256(canonical_bytes(behaviour_document(graph))).hexdigest()
