"""Helpers for the contracts tests: build graph documents tersely, read reports.

Not a test module (no test_ prefix); imported by tests/contracts/test_contracts_*.py.
Pure Python: no Django, no database.
"""

from __future__ import annotations

from typing import Any

from contracts.fixtures.builders import edge
from contracts.issues import Issue
from contracts.validate import Report, ResourceCheck, validate_graph

Doc = dict[str, Any]


def node(node_id: str, kind: str, **config: Any) -> Doc:
    doc: Doc = {"id": node_id, "kind": kind}
    if config:
        doc["config"] = config
    return doc


def graph(nodes: list[Doc], edges: list[Doc], **extra: Any) -> Doc:
    return {"schema_version": 2, "name": "Test", "nodes": nodes, "edges": edges, **extra}


def chain(*middle: Doc, **extra: Any) -> Doc:
    """input → middle nodes in order → output, wired with default ports."""
    nodes = [node("in", "input"), *middle, node("out", "output")]
    ids = [n["id"] for n in nodes]
    return graph(nodes, [edge(a, b) for a, b in zip(ids, ids[1:], strict=False)], **extra)


def prompt_chain(**extra: Any) -> Doc:
    """The smallest runnable graph: input → prompt → output."""
    return chain(node("ask", "prompt", template="Answer: {input}"), **extra)


def check(doc: Any, resources: ResourceCheck | None = None) -> Report:
    """validate_graph, plus the invariants every report must keep."""
    before = repr(doc)  # repr, not ==: NaN is not equal to itself
    report = validate_graph(doc, resources)
    assert repr(doc) == before, "validate_graph must not change the submitted document"
    assert report.runnable == (not any(i.severity == "error" for i in report.issues))
    assert (report.graph is None) == (report.content_sha256 is None)
    return report


def codes(report: Report) -> list[str]:
    return [i.code for i in report.issues]


def found(report: Report) -> list[tuple[str, str | None]]:
    """(code, path) of every issue, in report order."""
    return [(i.code, i.path) for i in report.issues]


def only(report: Report, code: str) -> Issue:
    matches = [i for i in report.issues if i.code == code]
    assert len(matches) == 1, f"expected one {code}, got {found(report)}"
    return matches[0]


def errors(report: Report) -> list[tuple[str, str | None]]:
    return [(i.code, i.path) for i in report.issues if i.severity == "error"]


def naive_behaviour_text(graph: dict[str, Any]) -> str:
    """content-hash.md's recipe, written as plainly as possible (fresh dicts, full sorts),
    to check the optimized hashing against."""
    from contracts.hashing import canonical_json

    nodes = []
    for n in graph["nodes"]:
        config = {k: v for k, v in (n.get("config") or {}).items() if v != ""}
        nodes.append({"id": n["id"], "kind": n["kind"], **({"config": config} if config else {})})
    edges = [{k: e[k] for k in ("from", "to", "from_port", "to_port")} for e in graph["edges"]]
    return canonical_json({
        "edges": sorted(edges, key=lambda e: (e["from"], e["from_port"], e["to"], e["to_port"])),
        # Ties (duplicate ids, an invalid graph) are broken by content.
        "nodes": sorted(nodes, key=lambda n: (n["id"], canonical_json(n))),
        "settings": graph["settings"],
    })
