"""Every success answer of the public API has a real schema: a client generator or a
reader of the docs learns its shape, and the test client checks answers against it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.openapi_check import openapi_document

COMBINATORS = ("$ref", "anyOf", "oneOf", "allOf", "enum", "const")


def untyped(schema: dict[str, Any] | None) -> bool:
    """No schema, ``{}``, or an object that says nothing of what it holds."""
    if not schema:
        return True
    if any(key in schema for key in COMBINATORS) or schema.get("type") != "object":
        return False
    extra = schema.get("additionalProperties")
    return not schema.get("properties") and not (isinstance(extra, dict) and extra)


def test_it_recognises_untyped_schemas() -> None:
    assert untyped(None) and untyped({})
    assert untyped({"type": "object"})
    assert untyped({"type": "object", "additionalProperties": {}})
    assert not untyped({"type": "object", "properties": {"id": {"type": "string"}}})
    assert not untyped({"type": "object", "additionalProperties": {"type": "integer"}})
    assert not untyped({"$ref": "#/components/schemas/Me"})
    assert not untyped({"type": "string"})


@pytest.mark.parametrize("urlconf", ["kionga.urls", "kionga.internal_urls"])
def test_no_success_answer_is_untyped(urlconf: str) -> None:
    doc = openapi_document(urlconf)
    found = []
    for path, methods in doc["paths"].items():
        for method, operation in methods.items():
            for status, answer in operation["responses"].items():
                if not status.startswith("2") or status == "204":
                    continue
                media = answer.get("content") or {"(none)": {}}
                found += [f"{method.upper()} {path} {status} {kind}"
                          for kind, body in media.items() if untyped(body.get("schema"))]
    assert found == []
