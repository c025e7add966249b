"""Verifying published versions before a run uses them: each graph must hash to the
content_sha256 its artifact claims (contracts.hashing, shared/spec/content-hash.md).

The gateway hands a run the graphs of every version its subflow, map and loop nodes
reach, with their hashes; a graph changed on the way (or in storage) with its hash
kept would run behaviour nobody published. The runner refuses such a run before any
node runs, and so does agents.native_graph:build_native for a whole artifact.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from contracts.hashing import content_sha256
from contracts.normalize import NotNormalizable, normalize


def graph_hash(graph: Any) -> str | None:
    """The behaviour hash of a graph, normalized first; None when it is no graph."""
    try:
        return content_sha256(normalize(graph).graph)
    except (NotNormalizable, KeyError, TypeError, AttributeError):
        return None


def mismatched_versions(subflows: Mapping[str, Any], hashes: Mapping[str, str]) -> list[str]:
    """The version IDs whose graph does not hash to its claimed content_sha256 (or
    that claim none), sorted."""
    return sorted(version for version, graph in subflows.items()
                  if hashes.get(version) is None or graph_hash(graph) != hashes[version])


def mismatch_message(versions: list[str]) -> str:
    shown = ", ".join(versions[:5]) + (" …" if len(versions) > 5 else "")
    return (f"published version {shown}: the graph does not match its content_sha256; "
            "the artifact was changed after it was published, so it is not run")
