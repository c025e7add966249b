"""The OpenAPI document at /api/schema/ is public, valid and describes our auth."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from drf_spectacular.drainage import GENERATOR_STATS

from tests.conftest import Api

pytestmark = pytest.mark.django_db


def test_it_serves_an_openapi_document(api: Api) -> None:
    response = api.anon().get("/api/schema/", {"format": "json"})
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    assert "/api/v1/me" in schema["paths"]
    assert schema["components"]["securitySchemes"]["bearerAuth"]["scheme"] == "bearer"


def test_it_generates_the_schema_without_warnings() -> None:
    # --fail-on-warn: an undocumented view shows up here instead of in the docs.
    out = StringIO()
    GENERATOR_STATS.reset()  # The command counts warnings globally, also from earlier tests.
    call_command("spectacular", "--validate", "--fail-on-warn", "--format=openapi-json", stdout=out)
    assert '"openapi"' in out.getvalue()


def test_it_serves_the_docs_page(api: Api) -> None:
    response = api.anon().get("/api/docs/")
    assert response.status_code == 200
    assert b"/api/schema/" in response.content
