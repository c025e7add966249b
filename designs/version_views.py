"""Version routes: publish a revision, list versions, read one artifact.

Running a version is the runs app's (POST agent-versions/{id}/runs, runs/versions.py).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from designs import version_openapi as doc
from designs.actions import check_design_access
from designs.publish import PublishRequest, do_publish, publish_answer
from designs.serializers import PublishSerializer
from designs.versions import check_version_access, versions_for_picker, versions_of_design
from kionga.models import Role
from kionga.openapi import ERRORS, ok
from kionga.request_body import parse


@extend_schema(request=PublishSerializer,
               responses={201: ok(doc.PUBLISHED), 200: ok(doc.PUBLISHED_BEFORE), **ERRORS},
               operation_id="publish_design")
@api_view(["POST"])
def publish(request: Request, design_id: Any) -> Response:
    design = check_design_access(request.user, design_id, Role.EDITOR)
    body = parse(PublishSerializer, request.data)
    assert isinstance(request.user, User)
    publish_request = PublishRequest(**body)
    version, created = do_publish(request.user, design, publish_request)
    return Response(publish_answer(version, created, publish_request),
                    status=201 if created else 200)


@extend_schema(responses={200: ok(doc.DESIGN_VERSIONS), **ERRORS},
               operation_id="list_design_versions")
@api_view(["GET"])
def design_versions(request: Request, design_id: Any) -> Response:
    design = check_design_access(request.user, design_id)
    return Response({"versions": versions_of_design(design)})


@extend_schema(parameters=[OpenApiParameter("project_id", int, required=False)],
               responses={200: ok(doc.VERSION_LIST), **ERRORS}, operation_id="list_versions")
@api_view(["GET"])
def versions(request: Request) -> Response:
    return Response({"versions": versions_for_picker(request.user,
                                                     request.query_params.get("project_id"))})


@extend_schema(responses={200: ok(doc.ARTIFACT), **ERRORS}, operation_id="get_version")
@api_view(["GET"])
def version(request: Request, version_id: Any) -> Response:
    return Response(check_version_access(request.user, version_id).artifact)
