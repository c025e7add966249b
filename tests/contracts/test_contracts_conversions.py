"""Conversions between port types: each row of the table, identity, and what has none."""

from __future__ import annotations

from typing import Any

import pytest

from contracts.conversions import CONVERSIONS, convert, target_type
from contracts.registry import COMPONENTS
from contracts.types import ALL_TYPES


def test_it_has_exactly_the_reference_table() -> None:
    assert set(CONVERSIONS) == {("json", "text"), ("documents", "text"), ("chat", "text"),
                                ("text", "chat"), ("text", "json")}


@pytest.mark.parametrize(("value", "source", "target", "expected"), [
    ({"b": 1, "a": "é"}, "json", "text", '{"b":1,"a":"é"}'),  # compact, order kept, raw
    ([1, "x"], "json", "text", '[1,"x"]'),
    ("plain", "json", "text", '"plain"'),
    ([{"text": "one"}, {"text": "two", "id": 3}], "documents", "text", "one\n\ntwo"),
    ([], "documents", "text", ""),
    ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
     "chat", "text", "hello"),
    ([], "chat", "text", ""),
    ("hello", "text", "chat", [{"role": "user", "content": "hello"}]),
    ('{"a": 1}', "text", "json", {"a": 1}),
    ("  [1, 2] ", "text", "json", [1, 2]),
    ("42", "text", "json", {"input": "42"}),
    ("{not json", "text", "json", {"input": "{not json"}),
])
def test_it_converts_each_row(value: Any, source: str, target: str, expected: Any) -> None:
    assert convert(value, source, target) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize("port_type", ALL_TYPES)
def test_it_passes_a_value_of_the_same_type_unchanged(port_type: str) -> None:
    value = object()
    assert convert(value, port_type, port_type) is value  # type: ignore[arg-type]


@pytest.mark.parametrize(("source", "target"), [
    ("json", "chat"), ("json", "documents"), ("documents", "json"), ("chat", "json"),
    ("chat", "documents"), ("text", "documents"), ("documents", "chat"),
])
def test_it_refuses_pairs_without_a_conversion(source: str, target: str) -> None:
    with pytest.raises(ValueError):
        convert([], source, target)  # type: ignore[arg-type]


def test_it_chooses_the_same_type_first() -> None:
    assert target_type("json", ("text", "json")) == "json"
    assert target_type("chat", ("text", "chat")) == "chat"


def test_it_chooses_the_first_accepted_type_with_a_conversion() -> None:
    assert target_type("text", ("json", "chat")) == "json"
    assert target_type("text", ("chat", "json")) == "chat"
    assert target_type("documents", ("chat", "text")) == "text"


def test_it_finds_no_target_type_when_nothing_converts() -> None:
    assert target_type("json", ("chat",)) is None
    assert target_type("documents", ("json", "chat")) is None
    assert target_type("text", ()) is None


def test_it_lets_every_registered_input_take_every_type() -> None:
    # Every kind with an input accepts text, and every type converts to text, so
    # registry 2.0.0 has no incompatible wiring (the validator still checks).
    for comp in COMPONENTS.values():
        if comp.inputs:
            assert all(target_type(t, comp.input_types) for t in ALL_TYPES), comp.kind
