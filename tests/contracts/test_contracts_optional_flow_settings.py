"""A loop's subflow and storage's dataset are optional, as the reference's table has
them: left empty, the node gets a warning saying what it will do, and the graph stays
runnable (the engine's side: tests/runner/test_engine_optional_flow_settings.py)."""

from __future__ import annotations

import pytest
from contracts_kit import chain, check, node

from contracts.registry import registry_document

CASES = [("loop", "subflow", "its input passes through unchanged"),
         ("storage", "dataset", "passes on an empty list of documents")]


@pytest.mark.parametrize(("kind", "setting", "says"), CASES)
def test_it_warns_about_the_node_without_its_resource(kind: str, setting: str,
                                                     says: str) -> None:
    for config in ({}, {setting: ""}):
        report = check(chain(node("n", kind, **config)))
        assert report.runnable
        [issue] = [i for i in report.issues if i.code == "missing_optional_config"]
        assert issue.severity == "warning" and says in issue.message
        assert issue.path == f"nodes.1.config.{setting}" and issue.node_id == "n"
        assert "missing_required_config" not in {i.code for i in report.issues}


@pytest.mark.parametrize(("kind", "setting", "says"), CASES)
def test_it_says_nothing_once_the_resource_is_set(kind: str, setting: str, says: str) -> None:
    report = check(chain(node("n", kind, **{setting: "some-id"})))
    assert report.runnable
    assert "missing_optional_config" not in {i.code for i in report.issues}


def test_the_components_document_marks_them_optional_and_says_what_happens() -> None:
    kinds = {k["kind"]: {s["name"]: s for s in k["settings"]}
             for k in registry_document()["components"]}
    for kind, setting, says in CASES:
        assert kinds[kind][setting]["required"] is False
        assert says in kinds[kind][setting]["when_empty"]
    # subflow and map cannot do without theirs: still required.
    assert kinds["subflow"]["subflow"]["required"] and kinds["map"]["subflow"]["required"]
