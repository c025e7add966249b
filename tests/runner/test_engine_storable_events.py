"""Every event leaves the engine storable, whatever text or JSON a run produces:
valid UTF-8 JSON without U+0000 (PostgreSQL's jsonb refuses both it and unpaired
surrogates; redis-py cannot encode the latter) that parses back to the same event."""

from __future__ import annotations

import json
from typing import Any

from engine_kit import chain, run
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.events import Emitter
from runner.protocol import encode_event

# Any code point, with the hostile ones (NUL, unpaired surrogate halves) drawn often.
chars = st.one_of(st.characters(), st.characters(categories=["Cs"]), st.just("\x00"))
texts = st.text(chars)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=12,
)


def strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *strings(v))]
    if isinstance(value, list):
        return [s for item in value for s in strings(item)]
    return []


def assert_storable(event: dict[str, Any]) -> None:
    raw = encode_event(event).encode("utf-8")  # strict: raises on an unpaired surrogate
    parsed = json.loads(raw)
    assert parsed == event
    # json writes U+0000 as the escape PostgreSQL refuses: no string may hold one.
    assert not [s for s in strings(parsed) if "\x00" in s]


@settings(deadline=None)  # a shared machine: timing is not the property
@given(texts, json_values)
def test_it_emits_only_storable_events(text: str, value: Any) -> None:
    received: list[dict[str, Any]] = []
    emitter = Emitter(received.append)
    emitter.event("node.completed", node_id="n", port="out", preview=text, text=value)
    emitter.delta("n", 1, text or "x")
    emitter.event("run.failed", error={"code": "node_error", "message": text}, reason=text,
                  usage={"tokens": 0}, extra={text: value})
    assert len(received) == 3
    for event in received:
        assert_storable(event)


@settings(deadline=None)  # a shared machine: timing is not the property
@given(json_values)
def test_it_runs_any_json_through_extract_and_a_model_to_storable_events(value: Any) -> None:
    # ensure_ascii: the input is valid text whose escapes decode to the hostile strings.
    doc = json.dumps({"a": value}, ensure_ascii=True)
    done = run(chain(("x", "extract", {"path": "a"}), ("m", "model")), doc)
    for event in done.events:
        assert_storable(event)


@settings(deadline=None)  # a shared machine: timing is not the property
@given(texts)
def test_it_runs_any_text_through_nodes_to_storable_events(text: str) -> None:
    done = run(chain(("p", "prompt", {"template": "say {input}"}), ("m", "model"),
                     ("c", "condition", {"expression": "matches:\\w"})), text)
    for event in done.events:
        assert_storable(event)
