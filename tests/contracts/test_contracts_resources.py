"""Resource checks: IDs must exist in the project; nothing leaks about other projects."""

from __future__ import annotations

from typing import Any

import pytest
from contracts_kit import chain, check, errors, node, only

from contracts.registry import ResourceKind
from contracts.validate import StaticResources, validate_graph


class Recorder:
    """A ResourceCheck that says which IDs exist and records every question."""

    def __init__(self, *existing: tuple[str, str]) -> None:
        self.existing = set(existing)
        self.asked: list[tuple[str, str]] = []

    def exists(self, kind: ResourceKind, resource_id: str) -> bool:
        self.asked.append((kind, resource_id))
        return (kind, resource_id) in self.existing


def every_resource_node() -> dict[str, Any]:
    return chain(
        node("llm", "model", model="m-1"),
        node("tool", "tool", tool="lookup"),
        node("call", "api", connection="crm"),
        node("kb", "knowledge", knowledge_base="kb-1"),
        node("file", "storage", dataset="ds-1"),
        node("sub", "subflow", subflow="v-1"),
        node("each", "map", subflow="v-2"),
        node("again", "loop", subflow="v-3"),
    )


def test_it_asks_about_every_resource_setting_once() -> None:
    recorder = Recorder()
    doc = every_resource_node()
    doc["nodes"].insert(2, node("llm-2", "model", model="m-1"))  # asked once, reported twice
    doc["edges"] = [{"from": a["id"], "to": b["id"]}
                    for a, b in zip(doc["nodes"], doc["nodes"][1:], strict=False)]
    report = check(doc, recorder)
    assert recorder.asked == [("model", "m-1"), ("function", "lookup"), ("connection", "crm"),
                              ("knowledge_base", "kb-1"), ("dataset", "ds-1"),
                              ("version", "v-1"), ("version", "v-2"), ("version", "v-3")]
    assert [(c, p) for c, p in errors(report)] == [
        ("unknown_resource", "nodes.1.config.model"),
        ("unknown_resource", "nodes.2.config.model"),
        ("unknown_resource", "nodes.3.config.tool"),
        ("unknown_resource", "nodes.4.config.connection"),
        ("unknown_resource", "nodes.5.config.knowledge_base"),
        ("unknown_resource", "nodes.6.config.dataset"),
        ("unknown_version", "nodes.7.config.subflow"),
        ("unknown_version", "nodes.8.config.subflow"),
        ("unknown_version", "nodes.9.config.subflow"),
    ]


def test_it_accepts_ids_that_exist() -> None:
    existing = [("model", "m-1"), ("function", "lookup"), ("connection", "crm"),
                ("knowledge_base", "kb-1"), ("dataset", "ds-1"), ("version", "v-1"),
                ("version", "v-2"), ("version", "v-3")]
    assert check(every_resource_node(), Recorder(*existing)).runnable


def test_it_gives_missing_and_foreign_ids_the_same_message() -> None:
    # The gateway answers False for both; the message must not tell them apart.
    missing = only(check(chain(node("llm", "model", model="m-gone")), Recorder()),
                   "unknown_resource")
    foreign = only(check(chain(node("llm", "model", model="m-gone")),
                         StaticResources({"model": ["m-other-project"]})), "unknown_resource")
    assert missing.message == foreign.message
    assert "does not exist in this project, or you cannot use it" in missing.message


def test_it_never_asks_about_the_platform_model() -> None:
    recorder = Recorder()
    doc = chain(node("a", "model", model="llm"), node("b", "model", model=""), node("c", "model"))
    assert check(doc, recorder).runnable
    assert recorder.asked == []


def test_it_does_not_ask_about_empty_wrong_or_too_long_values() -> None:
    recorder = Recorder()
    doc = chain(node("a", "api", connection=""), node("s", "storage", dataset=""),
                node("b", "tool", tool=5), node("c", "knowledge", knowledge_base="k" * 16_001))
    report = check(doc, recorder)
    assert recorder.asked == []
    # The empty connection is reported as missing (it is required), the empty dataset
    # is optional; neither is looked up.
    assert [c for c, _ in errors(report)] == ["missing_required_config",
                                              "config_value_not_string", "config_value_too_long"]


def test_it_skips_resource_checks_without_a_resource_check() -> None:
    assert check(every_resource_node()).runnable


def test_it_checks_resources_even_when_the_graph_does_not_normalize() -> None:
    doc = chain(node("llm", "model", model="m-gone"))
    doc["edges"].append({"from": 1, "to": "out"})
    report = check(doc, Recorder())
    assert report.graph is None
    assert [c for c, _ in errors(report)] == ["unknown_resource", "wrong_type"]


def test_it_lets_errors_of_the_resource_check_propagate() -> None:
    class Down:
        def exists(self, kind: ResourceKind, resource_id: str) -> bool:
            raise ConnectionError("database unavailable")

    with pytest.raises(ConnectionError):
        validate_graph(chain(node("llm", "model", model="m-1")), Down())
