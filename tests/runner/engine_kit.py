"""Helpers for the engine tests: build graphs tersely, run them, check every event.

Not a test module (no test_ prefix); imported by tests/runner/test_engine_*.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import jsonschema

from contracts.normalize import normalize
from runner.backends import ModelBackend
from runner.engine import run_graph
from runner.inmemory_resources import InMemoryResources
from runner.request import RunRequest, RunResult
from runner.resources import ResourceClient

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "contracts/schemas/run-event.v1.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(
    SCHEMA, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
)
TERMINAL = {"run.completed", "run.failed", "run.cancelled"}

NodeSpec = tuple[str, str] | tuple[str, str, dict[str, str]]
EdgeSpec = str | tuple[str, str] | tuple[str, str, str]


def graph(nodes: Iterable[NodeSpec], edges: Iterable[EdgeSpec],
          settings: dict[str, int] | None = None) -> dict[str, Any]:
    """nodes: (id, kind[, config]); edges: "a>b", "a.port>b", or tuples (a, b[, port])."""
    doc_nodes = [{"id": n[0], "kind": n[1], "config": dict(n[2]) if len(n) > 2 else {}}
                 for n in nodes]
    doc_edges = []
    for edge in edges:
        if isinstance(edge, str):
            src, dst = edge.split(">")
            src, _, port = src.partition(".")
        else:
            src, dst = edge[0], edge[1]
            port = edge[2] if len(edge) > 2 else ""
        doc_edges.append({"from": src, "to": dst, **({"from_port": port} if port else {})})
    doc = {"schema_version": 2, "name": "t", "nodes": doc_nodes, "edges": doc_edges,
           "settings": settings or {}}
    return normalize(doc).graph


def chain(*middle: NodeSpec, settings: dict[str, int] | None = None) -> dict[str, Any]:
    """input → middle... → output, connected in order through default ports."""
    nodes: list[NodeSpec] = [("input", "input"), *middle, ("output", "output")]
    ids = [n[0] for n in nodes]
    return graph(nodes, [f"{a}>{b}" for a, b in zip(ids, ids[1:], strict=False)], settings)


class Run:
    """A finished run: its result and every event, checked against run-event.v1."""

    def __init__(self, result: RunResult, events: list[dict[str, Any]]) -> None:
        self.result = result
        self.events = events
        check_events(events)

    @property
    def stored(self) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] != "node.delta"]

    def types(self, node_id: str | None = None) -> list[str]:
        return [e["type"] for e in self.stored if node_id is None or e.get("node_id") == node_id]

    def of(self, type_: str, node_id: str | None = None) -> list[dict[str, Any]]:
        return [e for e in self.events
                if e["type"] == type_ and (node_id is None or e.get("node_id") == node_id)]

    def one(self, type_: str, node_id: str | None = None) -> dict[str, Any]:
        found = self.of(type_, node_id)
        assert len(found) == 1, (type_, node_id, self.events)
        return found[0]

    def completed(self, node_id: str) -> dict[str, Any]:
        return self.one("node.completed", node_id)

    @property
    def terminal(self) -> dict[str, Any]:
        return self.events[-1]

    def skipped(self) -> list[str]:
        return [e["node_id"] for e in self.of("node.skipped")]

    def ran(self) -> list[str]:
        return [e["node_id"] for e in self.of("node.started")]


def check_events(events: list[dict[str, Any]]) -> None:
    """The invariants every run keeps, whatever happened in it."""
    for event in events:
        VALIDATOR.validate(event)
    stored = [e for e in events if e["type"] != "node.delta"]
    assert [e["seq"] for e in stored] == list(range(len(stored))), "seq 0.. without gaps"
    assert stored[0]["type"] == "run.started"
    assert sum(e["type"] in TERMINAL for e in events) == 1, "exactly one terminal event"
    assert events[-1]["type"] in TERMINAL, "nothing after the terminal event"
    last = -1
    for event in events:
        if event["type"] == "node.delta":
            assert event["seq"] == last, "a delta repeats the seq of the last stored event"
        else:
            last = event["seq"]


async def run_async(g: dict[str, Any], input: str = "hello", *,
                    resources: ResourceClient | None = None,
                    backend: ModelBackend | None = None,
                    cancel: asyncio.Event | None = None, **request: Any) -> Run:
    events: list[dict[str, Any]] = []
    request.setdefault("retry_delay_seconds", 0.0)
    request.setdefault("approval_poll_seconds", 0.005)
    result = await run_graph(
        RunRequest(graph=g, input=input, **request),
        resources=resources or InMemoryResources(),
        emit=events.append, cancel=cancel, backend=backend,
    )
    return Run(result, events)


def run(g: dict[str, Any], input: str = "hello", **kwargs: Any) -> Run:
    return asyncio.run(run_async(g, input, **kwargs))
