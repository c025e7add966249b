"""Node rules of the graph document: ids, counts, one input and one output, fields, config."""

from __future__ import annotations

import pytest
from contracts_kit import chain, check, codes, edge, errors, found, graph, node, prompt_chain


@pytest.mark.parametrize("node_id", ["a", "ask", "a1", "a-b", "step-2-refund", "a" + "b" * 62])
def test_it_accepts_valid_node_ids(node_id: str) -> None:
    assert check(chain(node(node_id, "prompt", template="{input}"))).runnable


@pytest.mark.parametrize("node_id", ["", "A", "Ask", "1a", "-a", "a_b", "a b", "a.b", "é",
                                     "a" + "b" * 63, "abc\n", "\nabc", "ab\x00"])
def test_it_refuses_invalid_node_ids(node_id: str) -> None:
    report = check(chain(node(node_id, "prompt", template="{input}")))
    assert errors(report) == [("invalid_node_id", "nodes.1.id")]
    assert report.issues[0].node_id == node_id


def test_it_accepts_63_characters_and_refuses_64() -> None:
    assert len("a" * 63) == 63
    assert check(chain(node("a" * 63, "prompt", template="x"))).runnable
    assert codes(check(chain(node("a" * 64, "prompt", template="x")))) == ["invalid_node_id"]


def test_it_refuses_a_duplicate_id_at_the_second_node() -> None:
    doc = prompt_chain()
    doc["nodes"].insert(2, node("ask", "prompt", template="again"))
    report = check(doc)
    assert errors(report) == [("duplicate_node_id", "nodes.2.id")]
    assert report.issues[0].node_id == "ask"


def test_it_accepts_2_nodes_and_refuses_1() -> None:
    assert check(graph([node("in", "input"), node("out", "output")],
                       [edge("in", "out")])).runnable
    assert found(check(graph([node("in", "input")], []))) == [
        ("too_few_nodes", None), ("missing_output", None)]
    assert found(check(graph([], []))) == [
        ("too_few_nodes", None), ("missing_input", None), ("missing_output", None)]


def test_it_accepts_100_nodes_and_refuses_101() -> None:
    def long_chain(count: int) -> dict[str, object]:
        return chain(*(node(f"p{i}", "prompt", template="{input}") for i in range(count - 2)))

    assert check(long_chain(100)).runnable
    assert found(check(long_chain(101))) == [("too_many_nodes", None)]


def test_it_needs_exactly_one_input() -> None:
    doc = prompt_chain()
    doc["nodes"].append(node("in-2", "input"))
    doc["nodes"].append(node("in-3", "input"))
    doc["edges"] += [edge("in-2", "ask"), edge("in-3", "ask")]
    report = check(doc)
    assert errors(report) == [("multiple_inputs", "nodes.3.kind"),
                              ("multiple_inputs", "nodes.4.kind")]
    assert [i.node_id for i in report.issues] == ["in-2", "in-3"]
    missing = prompt_chain()
    missing["nodes"][0] = node("in", "prompt", template="{input}")
    assert errors(check(missing)) == [("missing_input", None)]


def test_it_needs_exactly_one_output() -> None:
    doc = prompt_chain()
    doc["nodes"].append(node("out-2", "output"))
    doc["edges"].append(edge("ask", "out-2"))
    assert errors(check(doc)) == [("multiple_outputs", "nodes.3.kind")]
    missing = prompt_chain()
    missing["nodes"].pop()
    missing["edges"].pop()
    assert errors(check(missing)) == [("missing_output", None)]


@pytest.mark.parametrize(("field", "value"), [("id", None), ("kind", None)])
def test_it_reports_missing_fields(field: str, value: None) -> None:
    doc = prompt_chain()
    del doc["nodes"][1][field]
    report = check(doc)
    assert ("missing_field", f"nodes.1.{field}") in errors(report)
    assert report.graph is None and report.content_sha256 is None


@pytest.mark.parametrize(("field", "value"), [
    ("id", 5), ("kind", ["prompt"]), ("name", 3), ("group", {}), ("x", "40"), ("y", True),
    ("config", "template=x"), ("config", []),
])
def test_it_reports_wrong_types(field: str, value: object) -> None:
    doc = prompt_chain()
    doc["nodes"][1][field] = value
    assert ("wrong_type", f"nodes.1.{field}") in errors(check(doc))


def test_it_reports_a_node_that_is_not_an_object() -> None:
    doc = prompt_chain()
    doc["nodes"][1] = "ask"
    report = check(doc)
    assert ("wrong_type", "nodes.1") in errors(report)
    assert report.graph is None


def test_it_accepts_null_for_optional_fields_and_numbers_for_coordinates() -> None:
    doc = prompt_chain()
    doc["nodes"][1].update(name=None, group=None, x=None, y=-12.5)
    doc["nodes"][0]["config"] = None
    assert check(doc).runnable


def test_it_reports_an_unknown_kind() -> None:
    doc = prompt_chain()
    doc["nodes"][1] = node("ask", "webhook", url="x")
    report = check(doc)
    assert errors(report) == [("unknown_kind", "nodes.1.kind")]  # no port or config noise
    assert report.graph is not None  # it normalizes; it just cannot run


def test_it_accepts_30_config_keys_and_refuses_31() -> None:
    doc = prompt_chain()
    doc["nodes"][1]["config"].update({f"k{i}": "v" for i in range(29)})
    assert "too_many_config_keys" not in codes(check(doc))
    doc["nodes"][1]["config"]["k29"] = "v"
    report = check(doc)
    assert report.issues[0].code == "too_many_config_keys"
    assert report.issues[0].path == "nodes.1.config"
    assert codes(report).count("unknown_config_key") == 30


def test_it_counts_submitted_keys_not_the_model_normalization_adds() -> None:
    doc = chain(node("llm", "model", system="s", **{f"k{i}": "v" for i in range(29)}))
    assert "too_many_config_keys" not in codes(check(doc))


def test_it_accepts_16000_characters_and_refuses_16001() -> None:
    doc = prompt_chain()
    doc["nodes"][1]["config"]["template"] = "é" * 16_000  # code points, not bytes
    assert check(doc).runnable
    doc["nodes"][1]["config"]["template"] = "é" * 16_001
    assert errors(check(doc)) == [("config_value_too_long", "nodes.1.config.template")]


@pytest.mark.parametrize("value", [4, 4.0, True, None, ["a"], {"a": "b"}])
def test_it_refuses_config_values_that_are_not_strings(value: object) -> None:
    doc = chain(node("kb", "knowledge", knowledge_base="kb-1", limit=value))
    assert errors(check(doc)) == [("config_value_not_string", "nodes.1.config.limit")]


def test_it_refuses_unknown_config_keys_as_errors() -> None:
    doc = prompt_chain()
    doc["nodes"][1]["config"]["temperature"] = "0.7"
    report = check(doc)
    assert errors(report) == [("unknown_config_key", "nodes.1.config.temperature")]
    assert not report.runnable


def test_it_counts_an_empty_required_value_as_missing() -> None:
    for config in ({}, {"template": ""}):
        doc = chain(node("ask", "prompt", **config))
        assert errors(check(doc)) == [("missing_required_config", "nodes.1.config.template")]


def test_it_warns_about_side_effects_of_tool_and_api_nodes() -> None:
    doc = chain(node("t", "tool", tool="lookup"), node("a", "api", connection="crm"))
    report = check(doc)
    assert report.runnable
    assert found(report) == [("side_effects", "nodes.1"), ("side_effects", "nodes.2")]
    assert [(i.severity, i.node_id) for i in report.issues] == [("warning", "t"),
                                                                ("warning", "a")]
