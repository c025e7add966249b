"""GET /api/v1/ (the URL bin/demo prints): the API's entry points and its docs, as JSON.
Open without credentials (it says nothing about a caller or a project), under the same
rules as every route: a bad token is 401, the anonymous rate applies, errors are JSON."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from kionga import throttles
from kionga.redis_client import sync_redis
from tests.conftest import Api

ROOT = "/api/v1/"
# A documentation address of its own (RFC 5737), so no other test's window is counted.
ADDRESS = "192.0.2.77"


def test_it_answers_anonymous_callers_with_the_entry_points(api: Api, db: None) -> None:
    response = api.anon().get(ROOT)
    assert response.status_code == 200
    body = response.json()
    assert body["docs"] == {"openapi": "/api/schema/", "reference": "/api/docs/"}
    points = body["entry_points"]
    assert points["me"] == "/api/v1/me"
    assert points["agent-designs"] == "/api/v1/agent-designs"
    assert points["agent-approvals"] == "/api/v1/agent-approvals"
    assert points["agent-versions"] == "/api/v1/agent-versions"
    assert all("{" not in url and "<" not in url for url in points.values())


def test_every_entry_point_is_a_route_of_the_api(api: Api, alice: User) -> None:
    client = api.client_for(alice)
    for name, url in api.anon().get(ROOT).json()["entry_points"].items():
        # A route answers (405 for a POST-only one, 400 without its required query),
        # never with an unknown URL's 404.
        assert client.get(url).status_code in {200, 400, 405}, name


def test_it_tells_a_signed_in_caller_the_same(api: Api, alice: User, mallory: User) -> None:
    assert api.client_for(alice).get(ROOT).json() == api.client_for(mallory).get(ROOT).json() \
        == api.anon().get(ROOT).json()


def test_a_bad_token_is_401_as_everywhere(api: Api, db: None) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer kio_" + "x" * 43)
    response = client.get(ROOT)
    api.assert_error(response, 401, "invalid_token")
    assert response["WWW-Authenticate"].startswith("Bearer ")


def test_it_refuses_other_methods_as_json(api: Api, db: None) -> None:
    api.assert_error(api.anon().post(ROOT, {}, format="json"), 405, "method_not_allowed")


@pytest.fixture
def window() -> Iterator[None]:
    key = f"{throttles.KEY_PREFIX}anon:{ADDRESS}"
    sync_redis().delete(key)
    yield
    sync_redis().delete(key)


def test_anonymous_callers_are_throttled(api: Api, db: None, settings: Any,
                                         window: None) -> None:
    settings.KIONGA_THROTTLE_ANON = "2/minute"
    client = api.anon()
    for _ in range(2):
        assert client.get(ROOT, REMOTE_ADDR=ADDRESS).status_code == 200
    throttled = client.get(ROOT, REMOTE_ADDR=ADDRESS)
    api.assert_error(throttled, 429, "throttled")
    assert int(throttled["Retry-After"]) > 0
