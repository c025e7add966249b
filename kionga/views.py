"""Platform endpoints: who am I, health."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import connection
from django.http import HttpRequest, JsonResponse
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from kionga.access import blocked_projects
from kionga.models import Membership
from kionga.serializers import ErrorSerializer, MeSerializer


def me_dict(user: User) -> dict[str, Any]:
    memberships = (Membership.objects.filter(user=user).select_related("project")
                   .exclude(project_id__in=blocked_projects(user)))
    projects = [
        {"id": m.project.pk, "slug": m.project.slug, "name": m.project.name, "role": m.role}
        for m in memberships.order_by("project_id")
    ]
    return {"id": user.pk, "username": user.get_username(), "projects": projects}


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
