"""The API docs group every operation under one tag, with a one-line summary each, and
every tag says in a sentence what it groups (Swagger UI and ReDoc show both)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.urls import path
from drf_spectacular.drainage import GENERATOR_STATS
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from tests.openapi_check import openapi_document

PUBLIC_TAGS = ["designs", "components", "versions", "runs", "evaluations", "approvals",
               "agents", "operations", "projects", "tokens", "resources"]


def operations(doc: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for route, methods in doc["paths"].items():
        for method, operation in methods.items():
            yield f"{method.upper()} {route}", operation


@pytest.mark.parametrize(("urlconf", "allowed"), [("kionga.urls", PUBLIC_TAGS),
                                                  ("kionga.internal_urls", ["internal"])])
def test_every_operation_has_one_allowed_tag_and_a_summary(urlconf: str,
                                                           allowed: list[str]) -> None:
    doc = openapi_document(urlconf)
    untagged = {name: op.get("tags") for name, op in operations(doc)
                if len(op.get("tags", [])) != 1 or op["tags"][0] not in allowed}
    assert untagged == {}
    unsummarised = [name for name, op in operations(doc)
                    if not op.get("summary", "").strip() or "\n" in op["summary"]]
    assert unsummarised == []


@pytest.mark.parametrize(("urlconf", "allowed"), [("kionga.urls", PUBLIC_TAGS),
                                                  ("kionga.internal_urls", ["internal"])])
def test_the_document_describes_each_tag_it_uses(urlconf: str, allowed: list[str]) -> None:
    doc = openapi_document(urlconf)
    # In this order (Swagger UI and ReDoc show the groups as listed), none unused.
    assert [tag["name"] for tag in doc.get("tags", [])] == allowed
    assert all(tag.get("description", "").strip() for tag in doc["tags"]), doc["tags"]
    used = {op["tags"][0] for _, op in operations(doc) if op.get("tags")}
    assert used == set(allowed)


@extend_schema(responses={200: {"type": "string"}}, operation_id="not_in_the_catalogue")
@api_view(["GET"])
def uncatalogued(request: Request) -> Response:
    return Response("x")


urlpatterns = [path("api/v1/uncatalogued", uncatalogued)]


def test_an_operation_missing_from_the_catalogue_is_a_schema_warning() -> None:
    # The warning is what makes `spectacular --fail-on-warn` (test_platform_schema) fail.
    GENERATOR_STATS.reset()
    with GENERATOR_STATS.silence():
        SchemaGenerator(urlconf=__name__).get_schema(request=None, public=True)
    warnings = list(GENERATOR_STATS._warn_cache)
    GENERATOR_STATS.reset()
    assert any("'not_in_the_catalogue' has no tag and summary" in w for w in warnings), warnings
