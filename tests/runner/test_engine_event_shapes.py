"""run-event.v1: the schema itself, and the shapes the engine emits."""

from __future__ import annotations

import copy

import jsonschema
import pytest
from engine_kit import SCHEMA, VALIDATOR, chain, run

GOOD = [
    {"seq": 0, "type": "run.started", "at": "2026-11-30T10:00:00.000+00:00"},
    {"seq": 1, "type": "node.started", "at": "2026-11-30T10:00:00Z", "node_id": "a",
     "kind": "prompt", "attempt": 1},
    {"seq": 1, "type": "node.delta", "at": "2026-11-30T10:00:00+02:00", "node_id": "a",
     "attempt": 1, "delta": "hi ", "delta_index": 0},
    {"seq": 2, "type": "node.completed", "at": "2026-11-30T10:00:00+00:00", "node_id": "c",
     "port": "true", "preview": "x"},
    {"seq": 3, "type": "run.failed", "at": "2026-11-30T10:00:00+00:00",
     "error": {"code": "budget_exceeded", "message": "m"}, "reason": "budget_exceeded",
     "budget": "max_steps", "usage": {"tokens": 0}},
]

BAD = [
    ({"seq": 0, "type": "run.started", "at": "2026-11-30T10:00:00"}, "no offset"),
    ({"seq": -1, "type": "run.started", "at": "2026-11-30T10:00:00Z"}, "negative seq"),
    ({"seq": 0, "type": "run.begun", "at": "2026-11-30T10:00:00Z"}, "unknown type"),
    ({"seq": 0, "type": "node.failed", "at": "2026-11-30T10:00:00Z", "node_id": "a"},
     "node.failed without error"),
    ({"seq": 0, "type": "node.completed", "at": "2026-11-30T10:00:00Z", "node_id": "a",
      "preview": "x" * 2001}, "preview over 2,000"),
    ({"seq": 0, "type": "run.completed", "at": "2026-11-30T10:00:00Z", "output": "x",
      "usage": {"tokens": 0}, "extra": 1}, "unknown field"),
    ({"seq": 0, "type": "node.skipped", "at": "2026-11-30T10:00:00Z", "node_id": "a",
      "output": "x"}, "output outside run.completed"),
    ({"seq": 0, "type": "run.failed", "at": "2026-11-30T10:00:00Z", "reason": "timeout",
      "error": {"code": "late", "message": ""}, "usage": {"tokens": 0}}, "unknown code"),
    ({"seq": 0, "type": "run.completed", "at": "2026-11-30T10:00:00Z", "output": "x" * 65537,
      "usage": {"tokens": 0}}, "output over 64 KiB"),
]


def test_it_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize("event", GOOD)
def test_it_accepts_well_formed_events(event: dict[str, object]) -> None:
    VALIDATOR.validate(event)


@pytest.mark.parametrize(("event", "why"), BAD)
def test_it_rejects_malformed_events(event: dict[str, object], why: str) -> None:
    with pytest.raises(jsonschema.ValidationError):
        VALIDATOR.validate(copy.deepcopy(event))


def test_it_gives_deltas_the_seq_of_the_last_stored_event() -> None:
    done = run(chain(("m", "model")), "one two three")
    started = done.one("node.started", "m")
    deltas = done.of("node.delta", "m")
    assert deltas and all(d["seq"] == started["seq"] for d in deltas)
    assert done.completed("m")["seq"] == started["seq"] + 1
    assert done.result.events == len(done.stored)


def test_it_timestamps_every_event_with_an_offset() -> None:
    done = run(chain())
    assert all(e["at"].endswith("+00:00") for e in done.events)
    assert [e["at"] for e in done.events] == sorted(e["at"] for e in done.events)
