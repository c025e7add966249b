"""Public approval routes: list, read one request, and decide it (people with agents
write access).

Requests are created only by runs, with their credential on the internal listener, so
``POST agent-approvals`` here is 403 for everyone; and a run credential is refused
with 403 on every route here (it may never decide). People also decide in the
approver web UI (``approvals/web_views.py``), through the same actions.
"""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions
from rest_framework.authentication import get_authorization_header
from rest_framework.decorators import api_view, authentication_classes
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from approvals import openapi as doc
from approvals.actions import check_approval_access, do_decide
from approvals.listing import detail, list_approvals
from approvals.serializers import ApprovalListQuerySerializer, DecisionSerializer
from kionga.auth import PublicApiAuthentication
from kionga.errors import forbidden
from kionga.openapi import ERRORS, ok
from kionga.request_body import parse
from runs.credentials import CREDENTIAL_PREFIX

RUN_CREDENTIAL_REFUSED = ("A run credential cannot use the public approval routes; "
                          "runs create and poll their requests on the internal listener.")


class RefuseRunCredential(PublicApiAuthentication):
    """Asked first: a run credential here is 403, not the 401 of an unknown token —
    whatever its state, it may never decide (nor list or create here). Anything else
    goes on to the platform's token and session authentication. Listed first, it gives
    the platform's challenge, so an anonymous caller gets the 401 of every route."""

    def authenticate(self, request: Request) -> None:
        parts = get_authorization_header(request).split()
        if len(parts) == 2 and parts[0].lower() == b"bearer" and parts[1].startswith(
                CREDENTIAL_PREFIX.encode()):
            raise exceptions.PermissionDenied(RUN_CREDENTIAL_REFUSED)
        return None


class RefuseRunCredentialScheme(OpenApiAuthenticationExtension):
    """A refusal is no way to authenticate: nothing to document."""

    target_class = RefuseRunCredential
    name: list[str] = []

    def get_security_requirement(self, auto_schema: Any) -> list[dict[str, list[Any]]]:
        return []

    def get_security_definition(self, auto_schema: Any) -> list[dict[str, Any]]:
        return []


AUTHENTICATION: list[Any] = [RefuseRunCredential, *api_settings.DEFAULT_AUTHENTICATION_CLASSES]


@extend_schema(methods=["GET"], parameters=[ApprovalListQuerySerializer],
               responses={200: ok(doc.APPROVAL_LIST), **ERRORS},
               operation_id="list_approvals")
@extend_schema(methods=["POST"], request=None, responses=ERRORS,
               operation_id="create_approval",
               description="Always 403 here: runs create requests on the internal listener.")
@api_view(["GET", "POST"])
@authentication_classes(AUTHENTICATION)
def approvals(request: Request) -> Response:
    if request.method == "POST":
        raise forbidden("Approval requests are created by agent runs, not by people.")
    query = parse(ApprovalListQuerySerializer, request.query_params)
    return Response(list_approvals(request.user, query))


@extend_schema(responses={200: ok(doc.APPROVAL_DETAIL), **ERRORS}, operation_id="get_approval")
@api_view(["GET"])
@authentication_classes(AUTHENTICATION)
def approval(request: Request, approval_id: uuid.UUID) -> Response:
    return Response(detail(check_approval_access(request.user, approval_id)))


@extend_schema(request=DecisionSerializer, responses={200: ok(doc.APPROVAL_DETAIL), **ERRORS},
               operation_id="decide_approval")
@api_view(["POST"])
@authentication_classes(AUTHENTICATION)
def decision(request: Request, approval_id: uuid.UUID) -> Response:
    found = check_approval_access(request.user, approval_id)
    body = parse(DecisionSerializer, request.data)
    assert isinstance(request.user, User)
    decided = do_decide(request.user, found, body["decision"], body["comment"] or "")
    return Response(detail(decided))
