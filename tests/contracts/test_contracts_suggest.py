"""contracts.suggest: shortest input→output paths and inputs built from their conditions."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from contracts.conditions import evaluate
from contracts.suggest import (
    MAX_SUGGESTIONS,
    Need,
    build_input,
    regex_example,
    suggest_cases,
)
from contracts.validate import validate_graph

ARGUMENT = st.text(st.characters(codec="utf-8"), min_size=1, max_size=30)


def _ok(needs: list[Need]) -> str:
    text, problem = build_input(needs)
    assert problem is None, (needs, problem)
    for need in needs:
        assert evaluate(need.expression, text) == need.holds, (need, text)
    return text


@given(ARGUMENT.filter(lambda s: s.strip() != ""))
def test_contains_and_equals_are_always_derived(argument: str) -> None:
    assert argument.casefold() in _ok([Need(f"contains:{argument}", True, "c")]).casefold()
    _ok([Need(f"equals:{argument}", True, "c")])
    _ok([Need(f"not_contains:{argument}", False, "c")])


@given(st.integers(min_value=0, max_value=2_000))
def test_longer_than_gets_n_plus_one_characters(n: int) -> None:
    assert len(_ok([Need(f"longer_than:{n}", True, "c")])) > n
    _ok([Need(f"longer_than:{n + 20}", False, "c")])


def test_empty_and_not_empty() -> None:
    assert _ok([Need("empty", True, "c")]) == ""
    assert _ok([Need("not_empty", True, "c")]).strip()
    assert _ok([Need("not_empty", False, "c")]) == ""


@pytest.mark.parametrize("pattern", [
    r"(?i)\border\s+#?\d+", r"(?i)^(hi|hello)\b", r"^[A-Z]{3}-\d{4}$", r"[^a]b+", r"colou?r",
    r"a.c", r"\w+@\w+\.com", r"(?:yes|no)!",
])
def test_simple_patterns_get_a_matching_example(pattern: str) -> None:
    example = regex_example(pattern)
    assert example is not None
    _ok([Need(f"matches:{pattern}", True, "c")])


def test_contradictions_are_reported_not_hidden() -> None:
    text, problem = build_input([Need("contains:refund", True, "a"),
                                 Need("contains:refund", False, "b")])
    assert problem is not None and "no input" in problem


NEEDS = st.lists(st.builds(Need, st.sampled_from([
    "contains:refund", "not_contains:bug", "equals:hello", "longer_than:30", "empty",
    "not_empty", "matches:^\\d+$", "matches:(?i)order"]), st.booleans(), st.just("n")),
    max_size=4)


@given(NEEDS)
def test_a_built_input_never_lies(needs: list[Need]) -> None:
    # Either every need holds for the text, or the suggestion says it could not.
    text, problem = build_input(needs)
    if problem is None:
        assert all(evaluate(n.expression, text) == n.holds for n in needs)


def _diamonds(count: int) -> dict[str, Any]:
    """input → (a_i | b_i) → j_i → ... → output: 2^count paths."""
    nodes: list[dict[str, Any]] = [{"id": "input", "kind": "input"}]
    edges: list[dict[str, str]] = []
    last = "input"
    for i in range(count):
        for side in "ab":
            nodes.append({"id": f"{side}{i}", "kind": "prompt",
                          "config": {"template": "{input}"}})
            edges.append({"from": last, "to": f"{side}{i}"})
            edges.append({"from": f"{side}{i}", "to": f"j{i}"})
        nodes.append({"id": f"j{i}", "kind": "join", "config": {"require": "any"}})
        last = f"j{i}"
    nodes.append({"id": "output", "kind": "output"})
    edges.append({"from": last, "to": "output"})
    report = validate_graph({"schema_version": 2, "nodes": nodes, "edges": edges}, None)
    assert report.graph is not None
    return report.graph


def test_a_graph_with_too_many_paths_gets_twelve() -> None:
    found = suggest_cases(_diamonds(30))  # 2^30 paths
    assert len(found) == MAX_SUGGESTIONS
    assert len({s.name for s in found}) == MAX_SUGGESTIONS


def test_shortest_paths_come_first() -> None:
    graph = validate_graph({"schema_version": 2, "nodes": [
        {"id": "input", "kind": "input"},
        {"id": "p1", "kind": "prompt", "config": {"template": "{input}"}},
        {"id": "p2", "kind": "prompt", "config": {"template": "{input}"}},
        {"id": "output", "kind": "output"}], "edges": [
        {"from": "input", "to": "p1"}, {"from": "p1", "to": "p2"}, {"from": "p2", "to": "output"},
        {"from": "input", "to": "output"}]}, None).graph
    assert graph is not None
    assert [s.calls for s in suggest_cases(graph)] == [["input", "output"],
                                                       ["input", "p1", "p2", "output"]]


def test_error_ports_are_not_followed() -> None:
    graph = validate_graph({"schema_version": 2, "nodes": [
        {"id": "input", "kind": "input"},
        {"id": "m", "kind": "model", "config": {"model": "llm"}},
        {"id": "sorry", "kind": "prompt", "config": {"template": "sorry"}},
        {"id": "output", "kind": "output"}], "edges": [
        {"from": "input", "to": "m"}, {"from": "m", "to": "output"},
        {"from": "m", "to": "sorry", "from_port": "error"}, {"from": "sorry", "to": "output"}]},
        None).graph
    assert graph is not None
    assert [s.calls for s in suggest_cases(graph)] == [["input", "m", "output"]]


def test_a_condition_behind_a_prompt_is_noted() -> None:
    graph = validate_graph({"schema_version": 2, "nodes": [
        {"id": "input", "kind": "input"},
        {"id": "p", "kind": "prompt", "config": {"template": "Q: {input}"}},
        {"id": "c", "kind": "condition", "config": {"expression": "contains:refund"}},
        {"id": "output", "kind": "output"}], "edges": [
        {"from": "input", "to": "p"}, {"from": "p", "to": "c"},
        {"from": "c", "to": "output", "from_port": "true"}]}, None).graph
    assert graph is not None
    [only] = suggest_cases(graph)
    assert only.to_case()["note"] and "c sees the text of p" in only.to_case()["note"]


@given(st.integers(min_value=2, max_value=9).flatmap(lambda n: st.tuples(
    st.just(n), st.sets(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30))))
def test_paths_of_any_dag_are_real_distinct_and_shortest_first(
        shape: tuple[int, set[tuple[int, int]]]) -> None:
    count, pairs = shape
    ids = ["input", *(f"n{i}" for i in range(1, count - 1)), "output"]
    nodes = [{"id": ids[0], "kind": "input"}, *({"id": i, "kind": "join"} for i in ids[1:-1]),
             {"id": ids[-1], "kind": "output"}]
    edges = [{"from": ids[a], "to": ids[b]} for a, b in sorted(pairs) if a < b]
    edges.append({"from": "input", "to": "output"})
    report = validate_graph({"schema_version": 2, "nodes": nodes, "edges": edges}, None)
    assert report.graph is not None
    found = suggest_cases(report.graph)
    lengths = [len(s.calls) for s in found]
    assert lengths == sorted(lengths) and 1 <= len(found) <= MAX_SUGGESTIONS
    real = {(e["from"], e["to"]) for e in edges}
    for suggestion in found:
        assert suggestion.calls[0] == "input" and suggestion.calls[-1] == "output"
        assert all(pair in real for pair in itertools.pairwise(suggestion.calls))
    assert len({tuple(s.calls) for s in found}) == len(found)
