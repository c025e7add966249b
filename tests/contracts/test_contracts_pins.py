"""Pinned outputs (contracts.pins): a value must fit its port's type and the 64 KiB limit;
a graph takes only the pins that still fit it."""

from __future__ import annotations

from typing import Any

import pytest

from contracts.pins import PIN_BYTES, pin_port_type, pinned_reuse, value_problem

GRAPH: dict[str, Any] = {
    "nodes": [{"id": "input", "kind": "input"}, {"id": "m", "kind": "model"},
              {"id": "mem", "kind": "memory"}, {"id": "kb", "kind": "knowledge"},
              {"id": "x", "kind": "extract"}, {"id": "output", "kind": "output"}],
    "edges": [],
}


def test_the_port_types_come_from_the_registry() -> None:
    assert [pin_port_type(GRAPH, n, p) for n, p in (
        ("m", "out"), ("m", "error"), ("mem", "out"), ("kb", "out"), ("x", "out"))] == [
        "text", "text", "chat", "documents", "json"]
    assert pin_port_type(GRAPH, "m", "nope") is None
    assert pin_port_type(GRAPH, "output", "out") is None
    assert pin_port_type(GRAPH, "gone", "out") is None


@pytest.mark.parametrize(("value", "port_type"), [
    ("hi", "text"), ("", "text"),
    ([{"role": "user", "content": "hi"}], "chat"), ([], "chat"),
    ([{"text": "doc", "source": "a"}], "documents"),
    ({"a": [1, 2]}, "json"), (None, "json"), (3, "json"),
])
def test_values_of_the_ports_type_fit(value: Any, port_type: Any) -> None:
    assert value_problem(value, port_type) is None


@pytest.mark.parametrize(("value", "port_type"), [
    (3, "text"), (None, "text"), ({"text": "x"}, "text"),
    ("hi", "chat"), ([{"role": "user"}], "chat"), ([{"role": 1, "content": "x"}], "chat"),
    ("doc", "documents"), ([{"content": "x"}], "documents"),
])
def test_values_of_another_shape_are_refused(value: Any, port_type: Any) -> None:
    problem = value_problem(value, port_type)
    assert problem is not None and problem.startswith(f"A {port_type} value is")


def test_a_value_no_store_accepts_is_refused() -> None:
    for value in ("a\x00b", [{"text": "\ud800"}], {"n": float("nan")}):
        assert value_problem(value, "json") == (
            "A pinned value holds no U+0000, unpaired surrogate or non-finite number.")


def test_a_value_past_the_limit_is_refused() -> None:
    assert value_problem("x" * (PIN_BYTES - 10), "text") is None
    assert value_problem("x" * PIN_BYTES, "text") == (
        f"A pinned value is at most {PIN_BYTES} bytes of JSON.")


def test_a_graph_takes_the_pins_that_still_fit_it() -> None:
    pins = {"m": {"port": "out", "value": "pinned"},
            "mem": {"port": "out", "value": "a string is not a chat"},
            "kb": {"port": "nope", "value": "no such port"},
            "gone": {"port": "out", "value": "no such node"}}
    assert pinned_reuse(GRAPH, pins) == {
        "m": {"port": "out", "value": "pinned", "from_run": None}}
