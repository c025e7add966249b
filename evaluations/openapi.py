"""OpenAPI shapes of the evaluations API (documentation and the test client's checks)."""

from __future__ import annotations

from typing import Any

from kionga.openapi import INTEGER, STRING, obj

_STRINGS: dict[str, Any] = {"type": "array", "items": STRING}
_NULLABLE_STRING: dict[str, Any] = {"type": ["string", "null"]}
JUDGE: dict[str, Any] = obj({"criteria": _STRINGS, "min_score": {"type": "number"}},
                            {"reference": _NULLABLE_STRING})
EXPECTED: dict[str, Any] = obj({"calls": _STRINGS},
                               {"judge": {**JUDGE, "type": ["object", "null"]}})
TURN: dict[str, Any] = obj({"role": STRING, "content": STRING})
CASE: dict[str, Any] = obj({"id": STRING, "name": STRING, "input": STRING,
                            "history": {"type": "array", "items": TURN},
                            "tags": _STRINGS, "expected": EXPECTED})
FIXTURES: dict[str, Any] = obj({
    "design_id": STRING, "revision": INTEGER,
    "cases": {"type": "array", "items": CASE},
    "updated_at": _NULLABLE_STRING,
})
HOP: dict[str, Any] = obj({"from": STRING, "port": STRING, "to": STRING})
SUGGESTION: dict[str, Any] = obj({
    "name": STRING, "input": STRING, "tags": _STRINGS, "expected": EXPECTED,
    "path": {"type": "array", "items": HOP}, "note": _NULLABLE_STRING,
    "phrased": {"type": "string", "enum": ["llm", "conditions"]},
})
SUGGESTIONS: dict[str, Any] = obj({
    "suggestions": {"type": "array", "items": SUGGESTION},
    "saved": {"type": "array", "items": CASE},
}, {"revision": INTEGER})
