"""Edge rules: endpoints, default and named ports, types, duplicates and the edge limit."""

from __future__ import annotations

from typing import Any

import pytest
from contracts_kit import chain, check, edge, errors, found, graph, node, only, prompt_chain

from contracts import validate_edges
from contracts.registry import COMPONENTS


def resolved_ports(doc: dict[str, Any]) -> list[tuple[str, str]]:
    report = check(doc)
    assert report.graph is not None
    return [(e["from_port"], e["to_port"]) for e in report.graph["edges"]]


def test_it_defaults_ports_to_the_first_output_and_the_input() -> None:
    assert resolved_ports(prompt_chain()) == [("out", "in"), ("out", "in")]


def test_it_defaults_a_condition_to_its_true_port() -> None:
    doc = chain(node("check", "condition", expression="contains:refund"))
    assert resolved_ports(doc)[1] == ("true", "in")


@pytest.mark.parametrize("kind", sorted(k for k, c in COMPONENTS.items() if c.outputs))
def test_it_defaults_every_kind_to_its_first_output(kind: str) -> None:
    doc = graph([node("n", kind), node("out", "output")], [edge("n", "out")])
    graph_out = check(doc).graph  # normalizes even where required config is missing
    assert graph_out is not None
    assert graph_out["edges"][0]["from_port"] == COMPONENTS[kind].outputs[0].name


def test_it_accepts_every_named_output_port() -> None:
    doc = graph(
        [node("in", "input"),
         node("r", "router", route_1="contains:a", route_2="contains:b", route_3="contains:c",
              route_4="contains:d"),
         node("c", "condition", expression="empty"), node("l", "loop", subflow="v1"),
         node("ap", "approval"), node("m", "model"), node("out", "output")],
        [edge("in", "r")]
        + [edge("r", "c", port) for port in ("route_1", "route_2", "route_3", "route_4",
                                             "default")]
        + [edge("c", "l", "true"), edge("c", "l", "false"), edge("l", "ap", "out"),
           edge("l", "ap", "exhausted"), edge("l", "ap", "error"), edge("ap", "m", "approved"),
           edge("ap", "m", "rejected"), edge("m", "out", "out"), edge("m", "out", "error")])
    assert check(doc).runnable


def test_it_refuses_an_unknown_output_port() -> None:
    doc = prompt_chain()
    doc["edges"][1]["from_port"] = "error"  # prompts have no error port
    report = check(doc)
    assert errors(report) == [("unknown_port", "edges.1.from_port")]
    assert only(report, "unknown_port").node_id == "ask"


def test_it_refuses_an_unknown_input_port() -> None:
    doc = prompt_chain()
    doc["edges"][1]["to_port"] = "context"
    assert errors(check(doc)) == [("unknown_port", "edges.1.to_port")]


def test_it_refuses_an_edge_into_the_input_node() -> None:
    doc = prompt_chain()
    doc["edges"].append(edge("ask", "in"))
    assert errors(check(doc)) == [("unknown_port", "edges.2.to_port")]


def test_it_refuses_an_edge_out_of_the_output_node() -> None:
    doc = prompt_chain()
    doc["nodes"].insert(2, node("more", "prompt", template="x"))
    doc["edges"].append(edge("out", "more"))
    assert ("unknown_port", "edges.2.from_port") in errors(check(doc))


def test_it_refuses_a_route_whose_condition_is_not_configured() -> None:
    doc = chain(node("r", "router", route_1="contains:a", route_3=""))
    doc["edges"] += [edge("r", "out", "route_2"), edge("r", "out", "route_3"),
                     edge("r", "out", "default")]
    report = check(doc)
    assert errors(report) == [("unknown_port", "edges.2.from_port"),
                              ("unknown_port", "edges.3.from_port")]


def test_it_refuses_unknown_sources_and_targets() -> None:
    doc = prompt_chain()
    doc["edges"] += [edge("ghost", "out"), edge("ask", "nowhere"), edge("a", "b")]
    assert errors(check(doc)) == [
        ("unknown_edge_source", "edges.2.from"), ("unknown_edge_target", "edges.3.to"),
        ("unknown_edge_source", "edges.4.from"), ("unknown_edge_target", "edges.4.to")]


def test_it_refuses_the_same_edge_twice_even_with_ports_left_out() -> None:
    doc = prompt_chain()
    doc["edges"] += [edge("ask", "out", "out", "in"), edge("ask", "out", "out")]
    report = check(doc)
    assert errors(report) == [("duplicate_edge", "edges.2"), ("duplicate_edge", "edges.3")]


def test_it_accepts_parallel_edges_on_different_ports() -> None:
    doc = chain(node("c", "condition", expression="contains:x"))
    doc["edges"].append(edge("c", "out", "false"))
    assert check(doc).runnable


def test_it_reports_incompatible_types(monkeypatch: pytest.MonkeyPatch) -> None:
    # Every kind of registry 2.0.0 accepts text, so no real wiring is incompatible;
    # pretend a model could not take documents.
    monkeypatch.setitem(validate_edges._ACCEPTS, ("model", "documents"), False)
    doc = chain(node("kb", "knowledge", knowledge_base="kb-1"), node("llm", "model"))
    report = check(doc)
    assert errors(report) == [("incompatible_types", "edges.1")]
    assert report.issues[0].node_id == "llm"
    assert "documents" in report.issues[0].message


def test_it_reports_malformed_edges() -> None:
    doc = prompt_chain()
    doc["edges"] += ["ask->out", {"to": "out"}, {"from": 1, "to": "out"},
                     {"from": "ask", "to": "out", "from_port": 2}]
    report = check(doc)
    assert errors(report) == [("wrong_type", "edges.2"), ("missing_field", "edges.3.from"),
                              ("wrong_type", "edges.4.from"),
                              ("wrong_type", "edges.5.from_port")]
    assert report.graph is None


def test_it_treats_null_ports_as_defaults() -> None:
    doc = prompt_chain()
    doc["edges"][0].update(from_port=None, to_port=None)
    assert check(doc).runnable


def fan(edge_count: int) -> dict[str, Any]:
    """input → 20 prompts → 14 joins → output, cut to `edge_count` edges."""
    prompts = [node(f"p{i}", "prompt", template="{input}") for i in range(20)]
    joins = [node(f"j{i}", "join") for i in range(14)]
    edges = ([edge("in", p["id"]) for p in prompts] + [edge(j["id"], "out") for j in joins]
             + [edge(p["id"], j["id"]) for j in joins for p in prompts])
    return graph([node("in", "input"), *prompts, *joins, node("out", "output")],
                 edges[:edge_count])


def test_it_accepts_300_edges_and_refuses_301() -> None:
    assert check(fan(300)).runnable
    assert found(check(fan(301))) == [("too_many_edges", None)]
