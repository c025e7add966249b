"""agents.native_graph:build_native, imported by the string every artifact names: it
verifies all hashes and runs turns with the runner's engine."""

from __future__ import annotations

import asyncio
import copy
import importlib
from typing import Any

import pytest

from contracts.hashing import content_sha256
from contracts.normalize import normalize
from runner.inmemory_resources import InMemoryResources

RUNTIME = "agents.native_graph:build_native"


def build_native() -> Any:
    module, _, name = RUNTIME.partition(":")
    return getattr(importlib.import_module(module), name)


def chain(*middle: dict[str, Any]) -> dict[str, Any]:
    nodes = [{"id": "input", "kind": "input"}, *middle, {"id": "output", "kind": "output"}]
    edges = [{"from": a["id"], "to": b["id"]} for a, b in zip(nodes, nodes[1:], strict=False)]
    return normalize({"schema_version": 2, "nodes": nodes, "edges": edges}).graph


LEAF = chain({"id": "p", "kind": "prompt", "config": {"template": "<{input}>"}})
TOP = chain({"id": "each", "kind": "map", "config": {"subflow": "v-leaf", "concurrency": "2"}})


def artifact(graph: dict[str, Any] = TOP, **changes: Any) -> dict[str, Any]:
    doc = {"version": 3, "content_sha256": content_sha256(graph), "graph": graph,
           "runtime_module": RUNTIME,
           "subflows": [{"version_id": "v-leaf", "content_sha256": content_sha256(LEAF),
                         "graph": LEAF}]}
    return {**copy.deepcopy(doc), **changes}


def test_it_runs_a_verified_artifact_with_the_engine() -> None:
    native = build_native()(artifact())
    events: list[dict[str, Any]] = []
    result = asyncio.run(native.run('["a", "b", "c"]', resources=InMemoryResources(),
                                    emit=events.append))
    assert result.status == "completed" and result.output == '["<a>","<b>","<c>"]'
    completed = [e for e in events if e["type"] == "node.completed" and e["node_id"] == "each"]
    assert completed[0]["iterations"] == 3
    assert native.version == 3 and native.content_sha256 == content_sha256(TOP)


def test_it_refuses_a_graph_changed_after_publishing() -> None:
    changed = copy.deepcopy(TOP)
    changed["nodes"][1]["config"]["concurrency"] = "1"
    with pytest.raises(ValueError, match="content_sha256"):
        build_native()(artifact(graph=changed, content_sha256=content_sha256(TOP)))


def test_it_refuses_a_tampered_subflow() -> None:
    leaf = copy.deepcopy(LEAF)
    leaf["nodes"][1]["config"]["template"] = "pwned {input}"
    tampered = artifact(subflows=[{"version_id": "v-leaf", "content_sha256": content_sha256(LEAF),
                                   "graph": leaf}])
    with pytest.raises(ValueError, match="v-leaf"):
        build_native()(tampered)


def test_it_refuses_an_artifact_missing_a_reached_version() -> None:
    with pytest.raises(ValueError, match="v-leaf"):
        build_native()(artifact(subflows=[]))


@pytest.mark.parametrize("bad", [[], {"graph": {}}, {"graph": TOP, "content_sha256": 1},
                                 {"graph": TOP, "content_sha256": "x", "runtime_module": "x:y"},
                                 {"graph": TOP, "content_sha256": content_sha256(TOP),
                                  "subflows": [{"version_id": "v"}]}])
def test_it_refuses_what_is_no_artifact(bad: Any) -> None:
    with pytest.raises(ValueError):
        build_native()(bad)


def test_it_allows_side_effects_approved_at_publish() -> None:
    tool = chain({"id": "t", "kind": "tool", "config": {"tool": "lookup"}})
    native = build_native()({"graph": tool, "content_sha256": content_sha256(tool),
                             "subflows": []})
    resources = InMemoryResources(functions={"lookup": {"found": True}})
    result = asyncio.run(native.run("x", resources=resources))
    assert result.status == "completed" and result.output == '{"found":true}'
    refused = asyncio.run(native.run("x", resources=resources, allow_side_effects=False))
    assert refused.status == "failed"
