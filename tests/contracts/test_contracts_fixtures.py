"""The shared fixtures: each gets exactly its expected report, and together they cover
every issue code of validation-and-suggestions.md."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from contracts.fixtures import GRAPHS_DIR, load_graph_fixtures
from contracts.fixtures.generate import build
from contracts.schemas import schema_errors
from contracts.validate import Report, StaticResources, validate_graph

FIXTURES = load_graph_fixtures()
IDS = [f["name"] for f in FIXTURES]

# Every code validation-and-suggestions.md lists.
SPEC_CODES = {
    "invalid_document", "unsupported_schema_version", "missing_field", "wrong_type",
    "invalid_node_id", "duplicate_node_id", "too_few_nodes", "too_many_nodes", "missing_input",
    "multiple_inputs", "missing_output", "multiple_outputs", "unknown_kind",
    "missing_required_config", "unknown_config_key", "config_value_not_string",
    "config_value_too_long", "too_many_config_keys", "invalid_config_value",
    "invalid_condition", "invalid_regex", "too_many_edges", "unknown_edge_source",
    "unknown_edge_target", "unknown_port", "incompatible_types", "duplicate_edge", "cycle",
    "invalid_setting", "unknown_resource", "unknown_version", "unreachable_node", "dead_end",
    "side_effects", "migrated_from_v1", "memory_strategy_coerced",
}
# No wiring of registry 2.0.0 is incompatible (every input accepts text, and every type
# converts to text); test_contracts_edges covers the code with a patched table.
NOT_PRODUCIBLE = {"incompatible_types"}


def report_of(fixture: dict[str, Any]) -> Report:
    resources = fixture.get("resources")
    return validate_graph(fixture["graph"],
                          StaticResources(resources) if resources is not None else None)


def shape(report: Report) -> list[dict[str, str]]:
    """The report's issues as the fixtures write them (no message)."""
    return [{k: v for k, v in i.to_dict().items() if k != "message"} for i in report.issues]


@pytest.mark.parametrize("fixture", FIXTURES, ids=IDS)
def test_it_gives_each_fixture_its_expected_report(fixture: dict[str, Any]) -> None:
    report = report_of(fixture)
    expected = fixture["expected"]
    assert shape(report) == expected["issues"]
    assert report.runnable is expected["runnable"]
    assert report.content_sha256 == expected["content_sha256"]


RUNNABLE = [f for f in FIXTURES if f["expected"]["runnable"]]


@pytest.mark.parametrize("fixture", RUNNABLE, ids=[f["name"] for f in RUNNABLE])
def test_it_validates_runnable_fixtures_against_the_graph_schema(fixture: dict[str, Any]) -> None:
    report = report_of(fixture)
    assert report.graph is not None
    assert schema_errors("graph.v2", report.graph) == []
    if fixture["graph"].get("schema_version") == 2:
        assert schema_errors("graph.v2", fixture["graph"]) == []


def test_it_covers_every_issue_code() -> None:
    produced = {i["code"] for f in FIXTURES for i in f["expected"]["issues"]}
    assert produced == SPEC_CODES - NOT_PRODUCIBLE


def test_it_has_a_failing_fixture_per_error_code() -> None:
    failing = {i["code"] for f in FIXTURES if not f["expected"]["runnable"]
               for i in f["expected"]["issues"] if i["severity"] == "error"}
    error_codes = SPEC_CODES - NOT_PRODUCIBLE - {
        "unreachable_node", "dead_end", "side_effects", "migrated_from_v1",
        "memory_strategy_coerced"}
    assert error_codes <= failing


def test_it_names_fixtures_uniquely_after_their_files() -> None:
    files = sorted(p.stem for p in GRAPHS_DIR.glob("*.json"))
    assert IDS == files
    for fixture in FIXTURES:
        assert set(fixture) <= {"name", "graph", "expected", "resources"}
        assert set(fixture["expected"]) == {"runnable", "issues", "content_sha256"}


def test_it_keeps_the_files_equal_to_the_generator() -> None:
    # Regenerate with `python -m contracts.fixtures.generate` after changing it.
    assert sorted(build(), key=lambda f: f["name"]) == FIXTURES


def test_it_covers_the_templates_the_reference_names() -> None:
    kinds = {n["kind"] for f in FIXTURES if f["expected"]["runnable"]
             for n in f["graph"]["nodes"]}
    assert {"prompt", "model", "condition", "router", "join", "knowledge", "extract", "memory",
            "tool", "storage"} <= kinds


def test_it_loads_fresh_copies() -> None:
    first = load_graph_fixtures()
    first[0]["graph"] = None
    assert load_graph_fixtures()[0]["graph"] is not None
    assert json.loads(json.dumps(FIXTURES)) == copy.deepcopy(FIXTURES)
