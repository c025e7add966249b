"""The internal listener (:8087) exposes only what run credentials may call."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from kionga import settings_internal
from tests.conftest import Api

pytestmark = pytest.mark.urls("kionga.internal_urls")


def test_it_uses_its_own_urlconf() -> None:
    assert settings_internal.ROOT_URLCONF == "kionga.internal_urls"


def test_it_does_not_serve_the_public_api(api: Api, alice: User) -> None:
    api.assert_error(api.client_for(alice).get("/api/v1/me"), 404, "not_found")


def test_it_does_not_serve_the_admin(api: Api, alice: User) -> None:
    assert api.anon().get("/admin/").status_code == 404


def test_it_answers_health_checks(api: Api, db: None) -> None:
    response = api.anon().get("/healthz")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})
