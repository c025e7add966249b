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
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def canonical_bytes(value: Any) -> bytes:
    """canonical_json as the UTF-8 bytes that get hashed."""
    text = canonical_json(value)
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        return _LONE_SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text).encode("utf-8")


def behaviour_document(graph: dict[str, Any]) -> dict[str, Any]:
    """The part of a *normalized* graph that carries behaviour (what gets hashed)."""
    nodes = []
    for node in sorted(graph["nodes"], key=lambda n: n["id"]):
        item: dict[str, Any] = {"id": node["id"], "kind": node["kind"]}
        # An empty value means "use the default", so it does not change behaviour.
        config = {k: v for k, v in (node.get("config") or {}).items() if v != ""}
        if config:
            item["config"] = config
        nodes.append(item)
    edges = sorted(
        (
            {"from": e["from"], "to": e["to"], "from_port": e["from_port"], "to_port": e["to_port"]}
            for e in graph["edges"]
        ),
        key=lambda e: (e["from"], e["from_port"], e["to"], e["to_port"]),
    )
    return {"edges": edges, "nodes": nodes, "settings": dict(graph["settings"])}


def canonical_behaviour(graph: dict[str, Any]) -> str:
    return canonical_bytes(behaviour_document(graph)).decode("utf-8")


def content_sha256(graph: dict[str, Any]) -> str:
    """The behaviour hash of a normalized graph."""
    return hashlib.sha256(canonical_bytes(behaviour_document(graph))).hexdigest()
