"""The test client checks every documented answer against the OpenAPI document."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import include, path
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from kionga.serializers import MeSerializer
from tests.conftest import Api
from tests.openapi_check import openapi_document, response_pointer


@extend_schema(responses={200: MeSerializer})
@api_view(["GET"])
@permission_classes([AllowAny])
def lying(request: Request, user_id: int) -> Response:
    return Response({"id": "not-a-number", "username": "x", "projects": []})


urlpatterns: list[Any] = [
    path("api/v1/", include("kionga.api_urls")),
    path("api/test/users/<int:user_id>/lying", lying),
]

pytestmark = pytest.mark.urls(__name__)


def test_it_finds_the_schema_of_a_documented_answer() -> None:
    doc = openapi_document(__name__)
    assert response_pointer(doc, "GET", "/api/v1/me", 200) is not None
    assert response_pointer(doc, "GET", "/api/test/users/7/lying", 200) is not None
    assert response_pointer(doc, "GET", "/api/v1/me", 418) is None
    assert response_pointer(doc, "GET", "/api/unknown", 200) is None


def test_it_accepts_an_answer_that_matches(api: Api, alice: User) -> None:
    assert api.client_for(alice).get("/api/v1/me").status_code == 200


def test_it_fails_an_answer_that_does_not_match(api: Api) -> None:
    with pytest.raises(AssertionError, match="does not match its OpenAPI schema at id"):
        api.anon().get("/api/test/users/7/lying")
