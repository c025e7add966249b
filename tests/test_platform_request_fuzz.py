"""Classes of hostile input, generated (hypothesis), through Django's middleware and DRF
as every route takes them (the fixed cases over real HTTP are
tests/test_platform_request_matrix.py): never a 5xx; a body of another type than the
API's JSON is 415 whatever its bytes (an empty one is no body, on every route);
bytes that are not the API's strict JSON are 400
invalid_json; a query string of any bytes changes nothing on a route that does not
read it, but a NUL, which is 400 invalid_request on every route."""

from __future__ import annotations

import json
import math
import re
from urllib.parse import quote_from_bytes

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from rest_framework.test import APIClient

from kionga.models import Project
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.openapi_check import openapi_document

pytestmark = pytest.mark.django_db

FUZZ = hypothesis_settings(max_examples=40, deadline=None,
                           suppress_health_check=[HealthCheck.function_scoped_fixture])
OTHER_TYPES = st.sampled_from(["text/plain", "application/jsonx", "application/xml",
                               "application/x-www-form-urlencoded", "text/json",
                               "multipart/form-data; boundary=x", "application/octet-stream"])
# GET routes without path parameters or query parameters of their own: a query string
# is nothing to them.
PLAIN_GETS = sorted(
    path for path, item in openapi_document(str(settings.ROOT_URLCONF))["paths"].items()
    if "get" in item and not re.search(r"\{", path)
    and not any(p["in"] == "query" for p in item["get"].get("parameters", []))
    and {} not in item["get"].get("security", [{}]))


def _strict_json(raw: bytes) -> bool:
    """JSON the API takes as such (docs/api.md `invalid_json`): UTF-8, no NUL, no lone
    surrogate, finite numbers, nesting within 64 levels; an empty body is no body."""
    if not raw:
        return True
    try:
        value = json.loads(raw.decode("utf-8"), parse_constant=_not_finite)
    except (UnicodeDecodeError, ValueError):
        return False
    return _storable(value, 1)


def _not_finite(name: str) -> float:
    raise ValueError(name)


def _storable(value: object, depth: int) -> bool:
    if isinstance(value, str):
        return "\x00" not in value and not any("\ud800" <= c <= "\udfff" for c in value)
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (dict, list)):
        items = [*value.keys(), *value.values()] if isinstance(value, dict) else value
        return depth <= 64 and all(_storable(item, depth + 1) for item in items)
    return True


@pytest.fixture
def starter(api: Api, alice: User, acme: Project) -> tuple[APIClient, str]:
    design = make_design(alice, acme)
    return api.client_for(alice), f"/api/v1/agent-designs/{design.pk}/runs"


@FUZZ
@given(body=st.binary(min_size=1, max_size=300), content_type=OTHER_TYPES)
def test_a_body_of_another_type_is_415(starter: tuple[APIClient, str], body: bytes,
                                       content_type: str) -> None:
    client, url = starter
    for accept in ("application/json", "text/event-stream"):
        response = client.generic("POST", url, body, content_type,  # type: ignore[arg-type]
                                  HTTP_ACCEPT=accept)
        assert response.status_code == 415, (content_type, body, response.content)
        assert response.json()["error"]["code"] == "unsupported_media_type"


@FUZZ
@given(body=st.one_of(st.binary(max_size=300),
                      st.text(max_size=100).map(lambda t: json.dumps({"input": t}).encode()),
                      st.sampled_from([b'{"input": "\\u0000"}', b'{"input": "\\ud800"}',
                                       b'{"input": 1e999}', b"[" * 100 + b"]" * 100,
                                       b'{"input": "\xff"}', b"\xef\xbb\xbf{}"])))
def test_json_bytes_are_refused_as_json_or_taken(api: Api, alice: User, body: bytes) -> None:
    """The API's one JSON parser, as the token route reads it: bytes that are not
    strict JSON are 400 invalid_json; JSON is the route's to judge (a token made, or
    400 invalid_request for a body without its fields)."""
    response = api.client_for(alice).generic(
        "POST", "/api/v1/me/tokens", body, "application/json")  # type: ignore[arg-type]
    assert response.status_code in (201, 400), (body, response.content)
    code = response.json()["error"]["code"] if response.status_code == 400 else None
    if not _strict_json(body):
        assert code == "invalid_json", (body, response.content)
    else:
        assert code != "invalid_json", (body, response.content)


@FUZZ
@given(route=st.sampled_from(PLAIN_GETS), raw=st.binary(min_size=1, max_size=60))
def test_a_query_string_of_any_bytes_changes_nothing_but_a_nul(
        api: Api, alice: User, route: str, raw: bytes) -> None:
    client = api.client_for(alice)
    plain = client.get(route)
    asked = client.get(f"{route}?{quote_from_bytes(raw, safe='=&')}")
    if b"\x00" in raw:
        assert asked.status_code == 400, (route, raw)
        assert asked.json()["error"]["details"]["fields"] == {
            "url": ["Must not contain NUL (%00) characters."]}
    else:
        assert asked.status_code == plain.status_code, (route, raw, asked.content[:300])


def test_the_walk_has_routes() -> None:
    assert "/api/v1/me" in PLAIN_GETS and len(PLAIN_GETS) >= 5
