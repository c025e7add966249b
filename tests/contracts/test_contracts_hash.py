"""content_sha256: the spec's vectors exactly, and the consequences content-hash.md lists."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from contracts_kit import check, edge, naive_behaviour_text, node, prompt_chain

from contracts.fixtures import load_hash_vectors
from contracts.hashing import (
    behaviour_document,
    canonical_behaviour,
    canonical_bytes,
    canonical_json,
    content_sha256,
)
from contracts.normalize import normalize

VECTORS = load_hash_vectors()
SPEC_VECTORS = Path(__file__).resolve().parents[3] / "shared/spec/content-hash-vectors.json"


def sha(doc: Any) -> str:
    report = check(doc)
    assert report.content_sha256 is not None
    return report.content_sha256


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_it_reproduces_each_vector_exactly(vector: dict[str, Any]) -> None:
    graph = normalize(vector["graph"]).graph
    assert canonical_behaviour(graph) == vector["canonical"]
    assert content_sha256(graph) == vector["content_sha256"]
    assert hashlib.sha256(vector["canonical"].encode()).hexdigest() == vector["content_sha256"]
    assert check(vector["graph"]).content_sha256 == vector["content_sha256"]


def test_it_keeps_the_vectors_copy_equal_to_the_spec() -> None:
    if not SPEC_VECTORS.exists():
        pytest.skip("shared/spec is not beside this checkout")
    assert json.loads(SPEC_VECTORS.read_text(encoding="utf-8")) == VECTORS


def test_it_gives_the_reordered_renamed_vector_the_same_hash() -> None:
    assert VECTORS[1]["content_sha256"] == VECTORS[2]["content_sha256"]


def test_it_writes_the_canonical_escapes_of_the_recipe() -> None:
    text = canonical_json({"b": "<b>&é✓\u2028\u2029\n\t\b\f\r\x01\x1f\x7f\"\\", "a": [1, -2]})
    assert text == (
        '{"a":[1,-2],"b":"<b>&é✓\\u2028\\u2029\\n\\t\\b\\f\\r\\u0001\\u001f\x7f\\"\\\\"}'
    )


def test_it_sorts_keys_by_code_point() -> None:
    assert canonical_json({"é": 1, "z": 2, "Z": 3, "a": 4}) == '{"Z":3,"a":4,"z":2,"é":1}'


def test_it_escapes_lone_surrogates_instead_of_failing() -> None:
    assert canonical_bytes("a\ud800b") == b'"a\\ud800b"'
    doc = prompt_chain()
    doc["nodes"][1]["config"]["template"] = "bad \udfff half"
    assert len(sha(doc)) == 64


@pytest.mark.parametrize("change", ["rename", "move", "regroup", "reorder", "add_layout"])
def test_it_keeps_the_hash_when_only_layout_or_order_changes(change: str) -> None:
    doc = with_layout(prompt_chain())
    changed = copy.deepcopy(doc)
    if change == "rename":
        changed["name"] = "Another name"
        for n in changed["nodes"]:
            n["name"] = n["name"] + "!"
    elif change == "move":
        for n in changed["nodes"]:
            n["x"], n["y"] = n["x"] + 100, n["y"] - 7.5
    elif change == "regroup":
        changed["nodes"][1]["group"] = "Elsewhere"
    elif change == "reorder":
        changed["nodes"].reverse()
        changed["edges"].reverse()
    else:
        del changed["nodes"][0]["x"], changed["nodes"][0]["name"]
    assert sha(changed) == sha(doc)


@pytest.mark.parametrize("change", ["config_value", "port", "setting", "add_edge", "kind",
                                    "node_id", "add_config"])
def test_it_changes_the_hash_when_behaviour_changes(change: str) -> None:
    doc = router_graph()
    changed = copy.deepcopy(doc)
    if change == "config_value":
        changed["nodes"][1]["config"]["route_1"] = "contains:refunds"
    elif change == "port":
        changed["edges"][1]["from_port"] = "route_2"
    elif change == "setting":
        changed["settings"] = {"max_steps": 51}
    elif change == "add_edge":
        changed["edges"].append(edge("route", "out", "route_2"))
    elif change == "kind":
        changed["nodes"][2]["kind"] = "storage"
    elif change == "node_id":
        changed["nodes"][2]["id"] = "reply-2"
        changed["edges"][1]["to"] = "reply-2"
        changed["edges"][2]["from"] = "reply-2"
    else:
        changed["nodes"][2]["config"] = {"template": "Other: {input}"}
    assert sha(changed) != sha(doc)


def test_it_hashes_an_empty_value_like_an_absent_one() -> None:
    with_empty = prompt_chain()
    with_empty["nodes"].insert(2, node("llm", "model", model="llm", system=""))
    with_empty["edges"] = [edge("in", "ask"), edge("ask", "llm"), edge("llm", "out")]
    without = copy.deepcopy(with_empty)
    without["nodes"][2]["config"] = {"model": "llm"}
    assert sha(with_empty) == sha(without)
    assert '"system"' not in canonical_behaviour(normalize(with_empty).graph)


def test_it_hashes_default_ports_and_settings_like_explicit_ones() -> None:
    implicit = prompt_chain()
    explicit = prompt_chain(settings={"max_steps": 50, "timeout_seconds": 60,
                                      "max_tokens": 50_000})
    explicit["edges"] = [edge("in", "ask", "out", "in"), edge("ask", "out", "out", "in")]
    assert sha(implicit) == sha(explicit)


def test_it_hashes_an_absent_model_like_llm() -> None:
    absent = prompt_chain()
    absent["nodes"][1] = node("ask", "model")
    explicit = copy.deepcopy(absent)
    explicit["nodes"][1]["config"] = {"model": "llm"}
    assert sha(absent) == sha(explicit)


def test_it_shares_dicts_without_changing_what_is_hashed() -> None:
    # behaviour_document reuses the graph's edge and config dicts; the text must be
    # exactly what a fresh, naive construction gives.
    graph = normalize(router_graph()).graph
    graph["edges"][0] = {**graph["edges"][0], "extra": "ignored"}
    graph["nodes"][1]["config"]["route_4"] = ""
    assert canonical_json(behaviour_document(graph)) == naive_behaviour_text(graph)


def test_it_hashes_duplicate_ids_the_same_in_any_order() -> None:
    doc = prompt_chain()
    doc["nodes"].insert(2, node("ask", "prompt", template="Again: {input}"))
    swapped = copy.deepcopy(doc)
    swapped["nodes"][1], swapped["nodes"][2] = swapped["nodes"][2], swapped["nodes"][1]
    assert sha(doc) == sha(swapped)


def with_layout(doc: dict[str, Any]) -> dict[str, Any]:
    for i, n in enumerate(doc["nodes"]):
        n.update(name=f"Node {i}", x=40 * i, y=160, group="Main")
    return doc


def router_graph() -> dict[str, Any]:
    return {
        "schema_version": 2,
        "name": "Router",
        "nodes": [
            node("in", "input"),
            node("route", "router", route_1="contains:refund", route_2="equals:help"),
            node("reply", "prompt", template="Refund: {input}"),
            node("out", "output"),
        ],
        "edges": [edge("in", "route"), edge("route", "reply", "route_1"), edge("reply", "out"),
                  edge("route", "out", "default")],
    }
