"""The JSON Schemas: they load, agree with the registry, and accept what they should."""

from __future__ import annotations

from typing import Any

import pytest

from contracts.fixtures import load_graph_fixtures
from contracts.registry import COMPONENTS, LIMITS, REGISTRY_VERSION, SETTINGS_RANGES
from contracts.schemas import load_schema, schema_errors, schema_names
from contracts.validate import validate_graph


def kind_rules() -> dict[str, dict[str, Any]]:
    """kind → the config schema its `then` branch applies."""
    rules = load_schema("graph.v2")["$defs"]["node"]["allOf"]
    return {r["if"]["properties"]["kind"]["const"]: r["then"]["properties"]["config"]
            for r in rules}


def test_it_loads_the_schemas_by_name() -> None:
    assert {"graph.v2", "artifact.v1"} <= set(schema_names())
    assert load_schema("graph.v2") == load_schema("graph.v2.schema.json")
    with pytest.raises(KeyError):
        load_schema("../registry")


def test_it_lists_every_kind_of_the_registry() -> None:
    node = load_schema("graph.v2")["$defs"]["node"]
    assert node["properties"]["kind"]["enum"] == list(COMPONENTS)
    assert list(kind_rules()) == list(COMPONENTS)


@pytest.mark.parametrize("kind", list(COMPONENTS))
def test_it_describes_each_kind_config_as_the_registry_does(kind: str) -> None:
    config = kind_rules()[kind]
    settings = COMPONENTS[kind].settings
    assert list(config["properties"]) == [s.name for s in settings]
    assert config["additionalProperties"] is False
    assert config.get("required", []) == [s.name for s in settings if s.required]
    for s in settings:
        if s.type == "choice":
            assert config["properties"][s.name]["enum"] == ["", *s.choices]


def test_it_uses_the_registry_limits() -> None:
    schema = load_schema("graph.v2")
    assert schema["properties"]["nodes"]["minItems"] == LIMITS["min_nodes"]
    assert schema["properties"]["nodes"]["maxItems"] == LIMITS["max_nodes"]
    assert schema["properties"]["edges"]["maxItems"] == LIMITS["max_edges"]
    config = schema["$defs"]["node"]["properties"]["config"]
    assert config["maxProperties"] == LIMITS["max_config_keys"]
    assert config["additionalProperties"]["maxLength"] == LIMITS["max_config_value_chars"]
    settings = schema["$defs"]["settings"]["properties"]
    assert {k: (v["minimum"], v["maximum"], v["default"]) for k, v in settings.items()} == (
        SETTINGS_RANGES)


@pytest.mark.parametrize(("mutate", "where"), [
    (lambda d: d["nodes"][0].update(id="Bad"), "nodes/0/id"),
    (lambda d: d["nodes"][0].update(id="abc\n"), "nodes/0/id"),
    (lambda d: d["nodes"][1].update(kind="webhook"), "nodes/1/kind"),
    (lambda d: d["nodes"][1]["config"].update(extra="x"), "nodes/1/config"),
    (lambda d: d["nodes"][1]["config"].update(expression=""), "nodes/1/config/expression"),
    (lambda d: d.update(settings={"max_steps": 0}), "settings/max_steps"),
    (lambda d: d.update(settings={"retries": 1}), "settings"),
    (lambda d: d.update(schema_version=1), "schema_version"),
    (lambda d: d["edges"].append({"from": "input"}), "edges/2"),
])
def test_it_refuses_what_breaks_the_document_shape(mutate: Any, where: str) -> None:
    doc = reference_example()
    mutate(doc)
    assert any(e.startswith(where) for e in schema_errors("graph.v2", doc)), where


def test_it_accepts_an_artifact_with_subflows() -> None:
    assert schema_errors("artifact.v1", artifact()) == []


@pytest.mark.parametrize(("field", "value"), [
    ("content_sha256", "ABC"),
    ("runtime_module", "agents.other:build"),
    ("version", 0),
    ("registry_version", "two"),
    ("subflows", [{"version_id": "v", "content_sha256": "0" * 64}]),
    ("evaluation", {"passed": True}),
    ("graph", {"nodes": []}),
])
def test_it_refuses_broken_artifacts(field: str, value: Any) -> None:
    doc = artifact()
    doc[field] = value
    assert schema_errors("artifact.v1", doc) != []


def test_it_requires_every_artifact_field() -> None:
    for field in load_schema("artifact.v1")["required"]:
        doc = artifact()
        del doc[field]
        assert schema_errors("artifact.v1", doc) != [], field


def reference_example() -> dict[str, Any]:
    fixture = next(f for f in load_graph_fixtures() if f["name"] == "reference-example")
    doc: dict[str, Any] = fixture["graph"]
    return doc


def artifact() -> dict[str, Any]:
    report = validate_graph(reference_example())
    sub = validate_graph(next(f["graph"] for f in load_graph_fixtures()
                              if f["name"] == "template-prompt-model"))
    return {
        "version": 3,
        "content_sha256": report.content_sha256,
        "registry_version": REGISTRY_VERSION,
        "graph": report.graph,
        "source_revision": 12,
        "author": {"id": 7, "name": "Alice"},
        "notes": "Routes refunds.",
        "runtime_module": "agents.native_graph:build_native",
        "evaluation": {"evaluation_id": "ev-1", "passed": True,
                       "content_sha256": report.content_sha256, "cases": 4,
                       "passed_cases": 4, "judge_scores": {"relevance": 0.9}},
        "subflows": [{"version_id": "ver-1", "content_sha256": sub.content_sha256,
                      "graph": sub.graph}],
        "published_at": "2026-11-30T10:00:00+00:00",
    }
