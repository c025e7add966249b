"""Evaluations API (fixtures so far): thin views that parse, call one action, answer."""

from __future__ import annotations

import uuid

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from designs.actions import check_design_access
from evaluations import fixtures
from evaluations import openapi as doc
from evaluations.serializers import PutFixturesSerializer, SuggestSerializer
from kionga.access import check_role
from kionga.errors import invalid_field
from kionga.models import Role
from kionga.openapi import answers
from kionga.request_body import parse


@extend_schema(methods=["GET"], responses=answers(200, doc.FIXTURES),
               operation_id="get_fixtures")
@extend_schema(methods=["PUT"], request=PutFixturesSerializer,
               responses=answers(200, doc.FIXTURES), operation_id="put_fixtures")
@api_view(["GET", "PUT"])
def design_fixtures(request: Request, design_id: uuid.UUID) -> Response:
    if request.method == "GET":
        return Response(fixtures.fixtures_dict(check_design_access(request.user, design_id)))
    design = check_design_access(request.user, design_id, Role.EDITOR)
    body = parse(PutFixturesSerializer, request.data)
    cases = fixtures.check_cases(design, body["cases"])
    assert isinstance(request.user, User)
    fixtures.do_put_fixtures(request.user, design, body["revision"], cases)
    return Response(fixtures.fixtures_dict(design))


@extend_schema(request=SuggestSerializer, responses=answers(200, doc.SUGGESTIONS),
               operation_id="suggest_fixtures")
@api_view(["POST"])
def suggest(request: Request, design_id: uuid.UUID) -> Response:
    """Viewers may ask for proposals; saving them takes an editor."""
    design = check_design_access(request.user, design_id)
    body = parse(SuggestSerializer, request.data)
    if body["save"]:
        check_role(getattr(design, "caller_role", None), Role.EDITOR, "Design not found.")
    proposals = fixtures.suggestions(design)
    if not body["save"]:
        return Response({"suggestions": proposals, "saved": []})
    if body["revision"] is None:
        raise invalid_field("revision", "Send the fixtures revision you read to save.")
    assert isinstance(request.user, User)
    saved = fixtures.do_save_suggestions(request.user, design, body["revision"], proposals)
    revision = fixtures.fixtures_dict(design)["revision"]
    return Response({"suggestions": proposals, "saved": saved, "revision": revision})
