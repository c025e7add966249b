"""kionga.parsers.loads walks a parsed value only when its text could hold what the
platform refuses (an escape for NUL or a surrogate, a surrogate itself, more brackets
than the depth bound): the same refusals as the walk, at a fraction of its cost for
an upstream stream's hundreds of small chunks."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kionga import parsers
from kionga.parsers import MAX_JSON_DEPTH, JSONRefused, loads

CHUNK = json.dumps({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
                    "model": "m", "choices": [{"index": 0, "delta": {"content": "Hé [{ "},
                                               "finish_reason": None}]})


def test_an_ordinary_chunk_is_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    def walked(_value: object) -> None:
        raise AssertionError("walked")

    monkeypatch.setattr(parsers, "check_value", walked)
    assert loads(CHUNK)["choices"][0]["delta"]["content"] == "Hé [{ "
    assert loads(CHUNK.encode()) == json.loads(CHUNK)


@pytest.mark.parametrize("text", [
    '"\\u0000"', '{"\\u0000": 1}', '["a", {"b": "x\\u0000y"}]', '"\\ud800"', '"\\uDBFF"',
    '"\\udc00"', '{"\\uDFFFk": 0}', '"\\ud800\\u0041"',
])
def test_escapes_for_what_cannot_be_stored_are_refused(text: str) -> None:
    with pytest.raises(JSONRefused):
        loads(text)


def test_a_surrogate_in_the_text_itself_is_refused() -> None:
    with pytest.raises(JSONRefused):
        loads('["\ud800"]')


@pytest.mark.parametrize(("text", "value"), [
    ('"\\ud83d\\ude00"', "\U0001f600"),  # a pair: one character, walked and kept
    ('"\\\\u0000"', "\\u0000"),  # an escaped backslash, then text
    ('"\\u00e9\\u0001"', "é\x01"),
    ('"' + "[{" * 200 + '"', "[{" * 200),  # brackets in a string nest nothing
])
def test_what_only_looks_suspicious_is_kept(text: str, value: str) -> None:
    assert loads(text) == value


def test_the_depth_bound_holds_either_way() -> None:
    assert loads("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is not None
    with pytest.raises(JSONRefused):
        loads("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
    with pytest.raises(JSONRefused):
        loads('{"k":' * (MAX_JSON_DEPTH + 1) + "0" + "}" * (MAX_JSON_DEPTH + 1))


values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=20)


@given(values)
def test_the_scan_and_the_walk_agree(value: object) -> None:
    text = json.dumps(value)
    try:
        parsers.check_value(json.loads(text))
    except JSONRefused:
        with pytest.raises(JSONRefused):
            loads(text)
    else:
        assert loads(text) == value
