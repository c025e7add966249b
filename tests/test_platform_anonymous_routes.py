"""Every API route that needs a caller answers an anonymous request alike: 401
``not_authenticated`` with a ``WWW-Authenticate: Bearer`` challenge.

The routes come from the OpenAPI document, so a new route is walked without editing
this file; an operation whose security allows anonymous callers (``{}``) is skipped.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from django.conf import settings

from tests.conftest import Api
from tests.openapi_check import openapi_document

pytestmark = pytest.mark.django_db

METHODS = {"get", "post", "put", "patch", "delete"}
PLACEHOLDER = re.compile(r"\{(\w+)\}")
# A value of each path parameter's type: the route resolves, the object need not exist.
SAMPLE = {"uuid": str(uuid.UUID(int=1)), "integer": "1", "string": "x"}


def operations() -> list[tuple[str, str, dict[str, Any]]]:
    doc = openapi_document(str(settings.ROOT_URLCONF))
    return [(method, path, operation) for path, item in doc["paths"].items()
            for method, operation in item.items() if method in METHODS]


def needs_caller(operation: dict[str, Any]) -> bool:
    return {} not in operation.get("security", [{}])


def concrete(path: str, operation: dict[str, Any]) -> str:
    kinds = {p["name"]: p["schema"].get("format", p["schema"]["type"])
             for p in operation.get("parameters", []) if p["in"] == "path"}
    return PLACEHOLDER.sub(lambda m: SAMPLE[kinds[m[1]]], path)


PROTECTED = [(method, path, op) for method, path, op in operations() if needs_caller(op)]


def test_the_walk_covers_the_api() -> None:
    walked = {(method, path) for method, path, _ in PROTECTED}
    assert ("get", "/api/v1/me") in walked
    assert ("get", "/api/v1/agent-approvals") in walked
    assert len(walked) > 50


@pytest.mark.parametrize(("method", "path", "operation"), PROTECTED,
                         ids=[f"{m.upper()} {p}" for m, p, _ in PROTECTED])
def test_an_anonymous_caller_gets_401_with_a_bearer_challenge(
        api: Api, method: str, path: str, operation: dict[str, Any]) -> None:
    response = api.anon().generic(method.upper(), concrete(path, operation), "{}",
                                  content_type="application/json")
    api.assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"].startswith("Bearer "), response.headers
