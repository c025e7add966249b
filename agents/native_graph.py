"""agents.native_graph:build_native — the runtime module every artifact names.

    native = build_native(artifact)          # verifies every hash, or ArtifactError
    result = await native.run("question", resources=client, emit=sink)

`build_native` checks the whole artifact before anything runs: the graph hashes to
the artifact's content_sha256, every subflow hashes to its own, and every version the
graphs reach through subflow, map and loop nodes is in `subflows`. What it returns runs
turns with the runner's engine (runner.engine.run_graph), so a published version
behaves exactly as it did in the designer. Side effects were approved at publish:
its runs allow tool and api nodes unless told otherwise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from contracts.resources import graph_resources
from runner.artifacts import graph_hash, mismatch_message, mismatched_versions
from runner.backends import ModelBackend
from runner.engine import run_graph
from runner.events import EmitFn
from runner.records import RecordFn
from runner.request import LLMConfig, RunRequest, RunResult
from runner.resources import ResourceClient

RUNTIME_MODULE: Final = "agents.native_graph:build_native"


class ArtifactError(ValueError):
    """The artifact cannot be run as published (a hash mismatch, a missing subflow)."""


@dataclass(frozen=True)
class NativeGraph:
    """A verified published version, ready to run turns."""

    version: int | None
    content_sha256: str
    graph: dict[str, Any]
    subflows: dict[str, dict[str, Any]] = field(default_factory=dict)
    subflow_hashes: dict[str, str] = field(default_factory=dict)

    def request(self, input: str = "", **options: Any) -> RunRequest:
        """The engine's RunRequest for one turn; `options` are RunRequest fields
        (history, session_id, llm, allow_side_effects, ...)."""
        options.setdefault("allow_side_effects", True)
        options.setdefault("llm", LLMConfig())
        return RunRequest(graph=self.graph, input=input, subflows=dict(self.subflows),
                          subflow_hashes=dict(self.subflow_hashes), **options)

    async def run(self, input: str = "", *, resources: ResourceClient,
                  emit: EmitFn | None = None, cancel: asyncio.Event | None = None,
                  backend: ModelBackend | None = None, record: RecordFn | None = None,
                  **options: Any) -> RunResult:
        return await run_graph(self.request(input, **options), resources=resources,
                               emit=emit, cancel=cancel, backend=backend, record=record)


def build_native(artifact: Mapping[str, Any]) -> NativeGraph:
    """The runnable version of an artifact (artifact.v1), or ArtifactError."""
    if not isinstance(artifact, Mapping):
        raise ArtifactError("the artifact is not a JSON object")
    runtime = artifact.get("runtime_module", RUNTIME_MODULE)
    if runtime != RUNTIME_MODULE:
        raise ArtifactError(f"the artifact names runtime {runtime!r}, not {RUNTIME_MODULE}")
    graph, sha = artifact.get("graph"), artifact.get("content_sha256")
    if not isinstance(graph, dict) or not isinstance(sha, str):
        raise ArtifactError("the artifact needs a graph and its content_sha256")
    if graph_hash(graph) != sha:
        raise ArtifactError("the graph does not match its content_sha256; the artifact was "
                            "changed after it was published")
    subflows, hashes = _subflows(artifact.get("subflows", []))
    tampered = mismatched_versions(subflows, hashes)
    if tampered:
        raise ArtifactError(mismatch_message(tampered))
    missing = sorted(_reached([graph, *subflows.values()]) - set(subflows))
    if missing:
        raise ArtifactError(f"the graph reaches versions the artifact does not carry: "
                            f"{', '.join(missing[:5])}")
    version = artifact.get("version")
    return NativeGraph(version if isinstance(version, int) else None, sha, graph, subflows,
                       hashes)


def _subflows(entries: Any) -> tuple[dict[str, dict[str, Any]], dict[str, str]]:
    if not isinstance(entries, list):
        raise ArtifactError("subflows must be a list")
    graphs: dict[str, dict[str, Any]] = {}
    hashes: dict[str, str] = {}
    for entry in entries:
        ok = (isinstance(entry, dict) and isinstance(entry.get("version_id"), str)
              and isinstance(entry.get("content_sha256"), str)
              and isinstance(entry.get("graph"), dict))
        if not ok:
            raise ArtifactError("each subflow needs version_id, content_sha256 and graph")
        graphs[entry["version_id"]] = entry["graph"]
        hashes[entry["version_id"]] = entry["content_sha256"]
    return graphs, hashes


def _reached(graphs: list[dict[str, Any]]) -> set[str]:
    found: set[str] = set()
    for graph in graphs:
        found.update(graph_resources(graph).get("version", []))
    return found
