"""Version 1 drafts: migrated on read to version 2, with the reference's four changes."""

from __future__ import annotations

import copy
from typing import Any

from contracts_kit import check, codes, edge, found, node

from contracts.normalize import normalize


def v1_draft(**memory: Any) -> dict[str, Any]:
    return {
        "name": "Old",
        "nodes": [node("in", "input"), node("mem", "memory", **memory),
                  node("llm", "model", model=""), node("out", "output")],
        "edges": [edge("in", "mem"), edge("mem", "llm"), edge("llm", "out")],
    }


def test_it_sets_schema_version_2_and_warns() -> None:
    report = check(v1_draft())
    assert report.runnable
    assert report.graph is not None and report.graph["schema_version"] == 2
    assert found(report) == [("migrated_from_v1", None)]
    assert report.issues[0].severity == "warning"


def test_it_fills_in_edge_ports_and_default_settings() -> None:
    report = check(v1_draft())
    assert report.graph is not None
    assert report.graph["edges"][0] == {"from": "in", "to": "mem", "from_port": "out",
                                        "to_port": "in"}
    assert report.graph["settings"] == {"max_steps": 50, "timeout_seconds": 60,
                                        "max_tokens": 50_000}


def test_it_treats_an_empty_or_absent_model_as_llm() -> None:
    draft = v1_draft()
    draft["nodes"].insert(3, {"id": "bare", "kind": "model"})
    draft["edges"] = [edge("in", "mem"), edge("mem", "llm"), edge("llm", "bare"),
                      edge("bare", "out")]
    graph = check(draft).graph
    assert graph is not None
    assert graph["nodes"][2]["config"]["model"] == "llm"
    assert graph["nodes"][3]["config"] == {"model": "llm"}


def test_it_runs_a_free_text_memory_strategy_as_window_with_a_warning() -> None:
    report = check(v1_draft(strategy="remember everything"))
    assert report.runnable
    assert found(report) == [("migrated_from_v1", None),
                             ("memory_strategy_coerced", "nodes.1.config.strategy")]
    assert report.issues[1].node_id == "mem" and report.issues[1].severity == "warning"
    assert report.graph is not None
    assert report.graph["nodes"][1]["config"]["strategy"] == "window"


def test_it_keeps_a_valid_strategy_without_a_warning() -> None:
    report = check(v1_draft(strategy="none"))
    assert codes(report) == ["migrated_from_v1"]
    assert report.graph is not None and report.graph["nodes"][1]["config"]["strategy"] == "none"


def test_it_refuses_a_free_text_strategy_in_version_2() -> None:
    doc = v1_draft(strategy="remember everything")
    doc["schema_version"] = 2
    report = check(doc)
    assert found(report) == [("invalid_config_value", "nodes.1.config.strategy")]


def test_it_fails_a_version_1_free_text_condition_until_it_uses_the_grammar() -> None:
    draft = v1_draft()
    draft["nodes"][1] = node("mem", "condition", expression="is it about a refund?")
    report = check(draft)
    assert not report.runnable
    assert found(report) == [("migrated_from_v1", None),
                             ("invalid_condition", "nodes.1.config.expression")]
    draft["nodes"][1]["config"]["expression"] = "contains:refund"
    assert check(draft).runnable


def test_it_treats_an_explicit_version_1_like_a_missing_one() -> None:
    draft = v1_draft()
    explicit = {**copy.deepcopy(draft), "schema_version": 1}
    assert check(explicit).to_dict() == check(draft).to_dict()


def test_it_never_rewrites_the_stored_document() -> None:
    draft = v1_draft(strategy="free text")
    before = copy.deepcopy(draft)
    normalize(draft)
    assert draft == before
