"""Every API error is ``{"error": {"code", "message", "details"}}`` with a stable code.

The routes below exist only for these tests (``pytest.mark.urls(__name__)``);
they reuse the real API routes so the real URLconf is exercised too.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from rest_framework import serializers
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from kionga.errors import APIError
from tests.conftest import Api


class NameSerializer(serializers.Serializer):
    name = serializers.CharField()


@api_view(["POST"])
@permission_classes([AllowAny])
def echo(request: Request) -> Response:
    serializer = NameSerializer(data=request.data)
    serializer.is_valid(raise_exception=True)
    return Response(serializer.validated_data)


@api_view(["GET"])
@permission_classes([AllowAny])
def conflict(request: Request) -> Response:
    raise APIError(409, "stale_revision", "The design changed.", {"current_revision": 3})


def plain_conflict(request: HttpRequest) -> HttpResponse:
    raise APIError(409, "stale_revision", "The design changed.")


@api_view(["GET"])
@permission_classes([AllowAny])
def crash(request: Request) -> Response:
    raise RuntimeError("boom")


urlpatterns: list[Any] = [
    path("api/v1/", include("kionga.api_urls")),
    path("api/test/echo", echo),
    path("api/test/conflict", conflict),
    path("api/test/plain-conflict", plain_conflict),
    path("api/test/crash", crash),
]

pytestmark = pytest.mark.urls(__name__)


def test_it_answers_an_unknown_api_route_with_json_404(api: Api, alice: User) -> None:
    api.assert_error(api.anon().get("/api/v1/no-such-thing"), 404, "not_found")
    api.assert_error(api.client_for(alice).get("/api/nope/"), 404, "not_found")


def test_it_rejects_malformed_json(api: Api) -> None:
    response = api.anon().post("/api/test/echo", data="{not json", content_type="application/json")
    api.assert_error(response, 400, "invalid_json")


def test_it_reports_validation_errors_per_field(api: Api) -> None:
    error = api.assert_error(api.anon().post("/api/test/echo", {}), 400, "invalid_request")
    assert error["message"] == "name: This field is required."
    assert error["details"] == {"fields": {"name": ["This field is required."]}}


def test_it_rejects_an_unsupported_media_type(api: Api) -> None:
    response = api.anon().post("/api/test/echo", data="name=x", content_type="text/plain")
    api.assert_error(response, 415, "unsupported_media_type")


def test_it_rejects_a_wrong_method(api: Api, alice: User) -> None:
    response = api.client_for(alice).post("/api/v1/me", {})
    api.assert_error(response, 405, "method_not_allowed")
    assert "GET" in response["Allow"]


def test_it_renders_an_api_error_with_its_code_and_details(api: Api) -> None:
    error = api.assert_error(api.anon().get("/api/test/conflict"), 409, "stale_revision")
    assert error["details"] == {"current_revision": 3}


def test_it_renders_an_api_error_from_a_plain_django_view(api: Api) -> None:
    api.assert_error(api.anon().get("/api/test/plain-conflict"), 409, "stale_revision")


@pytest.mark.allow_output  # The crash is logged on purpose.
def test_it_turns_a_crash_into_json_500(api: Api) -> None:
    client = api.anon()
    client.raise_request_exception = False
    error = api.assert_error(client.get("/api/test/crash"), 500, "internal_error")
    assert "boom" not in error["message"]  # Internals never leak to the client.


def test_it_leaves_non_api_404s_alone(api: Api) -> None:
    response = api.anon().get("/not-an-api-route")
    assert response.status_code == 404
    assert not response["Content-Type"].startswith("application/json")
