"""The report: its shape, document order of issues, runnable, and what is a 400."""

from __future__ import annotations

import json
from typing import Any

import pytest
from contracts_kit import chain, check, codes, edge, found, node, prompt_chain

from contracts.issues import Issue
from contracts.validate import Report, check_document_shape, validate_graph


def test_it_returns_the_documented_shape() -> None:
    body = check(prompt_chain()).to_dict()
    assert list(body) == ["runnable", "issues", "content_sha256", "graph"]
    assert body["runnable"] is True and body["issues"] == []
    assert len(body["content_sha256"]) == 64
    assert body["graph"]["schema_version"] == 2
    json.dumps(body)  # serializable as it is


def test_it_serializes_issues_with_optional_path_and_node_id() -> None:
    doc = prompt_chain(settings={"max_steps": 0})
    doc["nodes"].append(node("stray", "prompt", template="x"))
    doc["nodes"].pop(0)
    issues = check(doc).to_dict()["issues"]
    assert {"severity", "code", "message", "path"} == set(issues[0])  # settings: no node
    assert issues[0]["path"] == "settings.max_steps"
    with_node = [i for i in issues if i["code"] == "dead_end"][0]
    assert with_node["node_id"] == "stray" and with_node["path"] == "nodes.2"
    graph_level = [i for i in issues if i["code"] == "missing_input"][0]
    assert set(graph_level) == {"severity", "code", "message"}


def test_it_sorts_issues_into_document_order() -> None:
    doc = chain(node("a", "prompt"), node("b", "prompt", template="x", bogus="y"),
                node("c", "condition", expression="nope"), settings={"max_steps": 0})
    doc["name"] = 5
    doc["schema_version"] = 1
    doc["nodes"].append(node("in-2", "input"))
    doc["edges"] += [edge("ghost", "a"), edge("c", "b"), edge("b", "a"), edge("in-2", "c")]
    assert found(check(doc)) == [
        ("migrated_from_v1", None),
        ("wrong_type", "name"),
        ("invalid_setting", "settings.max_steps"),
        ("missing_required_config", "nodes.1.config.template"),
        ("unknown_config_key", "nodes.2.config.bogus"),
        ("invalid_condition", "nodes.3.config.expression"),
        ("multiple_inputs", "nodes.5.kind"),
        ("unknown_edge_source", "edges.4.from"),
        ("cycle", None),
    ]


def test_it_gives_the_same_report_every_time() -> None:
    doc = chain(node("a", "prompt"), node("b", "prompt", template="x", bogus="y"))
    doc["edges"].append(edge("b", "a"))
    assert check(doc).to_dict() == check(json.loads(json.dumps(doc))).to_dict()


def test_it_is_runnable_exactly_without_errors() -> None:
    warnings_only = chain(node("t", "tool", tool="x"))
    assert check(warnings_only).runnable and codes(check(warnings_only)) == ["side_effects"]
    assert not check(chain(node("a", "prompt"))).runnable


@pytest.mark.parametrize("body", [None, 5, "graph", [], True, 1.5])
def test_it_refuses_a_body_that_is_not_an_object(body: Any) -> None:
    issues = check_document_shape(body)
    assert [(i.code, i.path) for i in issues] == [("invalid_document", None)]
    report = check(body)
    assert report.to_dict() == {"runnable": False, "issues": [i.to_dict() for i in issues],
                                "content_sha256": None, "graph": None}


@pytest.mark.parametrize(("body", "paths"), [
    ({}, ["nodes", "edges"]),
    ({"nodes": []}, ["edges"]),
    ({"nodes": {}, "edges": []}, ["nodes"]),
    ({"nodes": [], "edges": None}, ["edges"]),
])
def test_it_refuses_a_body_without_node_and_edge_arrays(body: Any, paths: list[str]) -> None:
    assert [(i.code, i.path) for i in check_document_shape(body)] == [
        ("invalid_document", p) for p in paths]
    assert codes(check(body)) == ["invalid_document"] * len(paths)


def test_it_accepts_the_shape_of_any_object_with_both_arrays() -> None:
    assert check_document_shape({"nodes": [], "edges": [], "project_id": "p1"}) == []


@pytest.mark.parametrize("version", [3, 0, -1, "2", 2.0, True, None, [2]])
def test_it_refuses_unsupported_schema_versions_with_nothing_else(version: Any) -> None:
    doc = prompt_chain(schema_version=version)
    doc["nodes"].append("junk")
    report = check(doc)
    assert found(report) == [("unsupported_schema_version", "schema_version")]
    assert report.graph is None


def test_it_ignores_unknown_top_level_fields() -> None:
    assert check(prompt_chain(project_id="p-1", revision=4)).runnable


def test_it_survives_a_document_nested_too_deeply() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    doc = prompt_chain()
    doc["nodes"][1]["config"]["template"] = deep
    report = validate_graph(doc)
    assert not report.runnable
    assert "invalid_document" in codes(report) or "config_value_not_string" in codes(report)


def test_it_builds_reports_from_issues() -> None:
    report = Report(False, [Issue("error", "cycle", "m")])
    assert report.errors == report.issues
    assert report.to_dict()["graph"] is None
