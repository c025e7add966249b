"""Platform endpoints: the API's root, who am I, health."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response

from kionga.access import blocked_projects
from kionga.api_root import api_index
from kionga.models import Membership
from kionga.openapi import ERRORS
from kionga.serializers import ApiRootSerializer, ErrorSerializer, MeSerializer


def me_dict(user: User) -> dict[str, Any]:
    memberships = (Membership.objects.filter(user=user).select_related("project")
                   .exclude(project_id__in=blocked_projects(user)))
    projects = [
        {"id": m.project.pk, "slug": m.project.slug, "name": m.project.name, "role": m.role}
        for m in memberships.order_by("project_id")
    ]
    return {"id": user.pk, "username": user.get_username(), "projects": projects}


@extend_schema(responses={200: ApiRootSerializer, **ERRORS}, operation_id="api_root",
               description="The API's entry points and docs. Open without credentials: "
                           "it tells nothing about a caller or a project.")
@api_view(["GET"])
@permission_classes([AllowAny])
def api_root(request: Request) -> Response:
    return Response(api_index())


@extend_schema(responses={200: MeSerializer, 401: ErrorSerializer}, operation_id="me")
@api_view(["GET"])
def me(request: Request) -> Response:
    assert isinstance(request.user, User)  # IsAuthenticated ran before us.
    return Response(me_dict(request.user))


def healthz(request: HttpRequest) -> JsonResponse:
    # Liveness plus a trivial query, so a broken database shows up in the probe.
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


# The product's mark: every page (admin, approver UI, canvas) gets it without a static
# file lookup, and browsers stop logging a 404 for /favicon.ico on each page.
FAVICON_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
    '<rect width="32" height="32" rx="6" fill="#1f4e79"/>'
    '<circle cx="10" cy="16" r="4" fill="#fff"/><circle cx="23" cy="9" r="3.5" fill="#fff"/>'
    '<circle cx="23" cy="23" r="3.5" fill="#fff"/>'
    '<path d="M13 14.5 20 10.5M13 17.5 20 21.5" stroke="#fff" stroke-width="2"/></svg>'
)


def favicon(request: HttpRequest) -> HttpResponse:
    response = HttpResponse(FAVICON_SVG, content_type="image/svg+xml")
    response["Cache-Control"] = "public, max-age=86400"
    return response
