"""Members, invitations and tokens routes: parse, check, one action, the answer."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from kionga.access import check_project_access
from kionga.models import ApiToken, Role
from kionga.openapi import ERRORS, ok
from kionga.projects import invitations as inv
from kionga.projects import members as m
from kionga.projects import openapi as doc
from kionga.projects import token_actions as t
from kionga.projects.serializers import (
    AddMemberSerializer,
    ChangeMemberSerializer,
    CreateTokenSerializer,
    UpdateTokenSerializer,
)
from kionga.request_body import parse

NO_CONTENT = {204: None, **ERRORS}


def _user(request: Request) -> User:
    assert isinstance(request.user, User)  # IsAuthenticated ran before us.
    return request.user


def _acting_token(request: Request) -> ApiToken | None:
    """The bearer token the request came with; None for a signed-in person (session)."""
    return request.auth if isinstance(request.auth, ApiToken) else None


@extend_schema(methods=["GET"], responses={200: ok(doc.MEMBERS), **ERRORS},
               operation_id="list_members")
@extend_schema(methods=["POST"], request=AddMemberSerializer,
               responses={202: ok(doc.INVITATION), **ERRORS}, operation_id="add_member",
               description="Invites the person: they become a member once they accept. "
                           "The answer is the same whether or not the name or email is "
                           "anyone's.")
@api_view(["GET", "POST"])
def members(request: Request, project_id: int) -> Response:
    if request.method == "GET":
        return Response({"members": m.members_of(check_project_access(request.user,
                                                                      project_id))})
    project = check_project_access(request.user, project_id, Role.ADMIN)
    body = parse(AddMemberSerializer, request.data)
    invited = inv.do_invite(_user(request), project, body["user"], body["role"])
    return Response(inv.invitation_dict(invited), status=202)


@extend_schema(responses={200: ok(doc.INVITATIONS), **ERRORS},
               operation_id="list_project_invitations")
@api_view(["GET"])
def project_invitations(request: Request, project_id: int) -> Response:
    project = check_project_access(request.user, project_id, Role.ADMIN)
    return Response({"invitations": inv.project_invitations(project)})


@extend_schema(responses=NO_CONTENT, operation_id="revoke_invitation")
@api_view(["DELETE"])
def project_invitation(request: Request, project_id: int,
                       invitation_id: uuid.UUID) -> Response:
    project = check_project_access(request.user, project_id, Role.ADMIN)
    inv.do_revoke(_user(request), project, invitation_id)
    return Response(status=204)


@extend_schema(responses={200: ok(doc.MY_INVITATIONS), **ERRORS},
               operation_id="list_my_invitations")
@api_view(["GET"])
def my_invitations(request: Request) -> Response:
    return Response({"invitations": inv.invitations_for(_user(request))})


@extend_schema(request=None, responses={200: ok(doc.JOINED), **ERRORS},
               operation_id="accept_invitation")
@api_view(["POST"])
def accept_invitation(request: Request, invitation_id: uuid.UUID) -> Response:
    return Response(inv.do_accept(_user(request), invitation_id).to_dict())


@extend_schema(request=None, responses=NO_CONTENT, operation_id="decline_invitation")
@api_view(["POST"])
def decline_invitation(request: Request, invitation_id: uuid.UUID) -> Response:
    inv.do_decline(_user(request), invitation_id)
    return Response(status=204)


@extend_schema(methods=["PATCH"], request=ChangeMemberSerializer,
               responses={200: ok(doc.MEMBER), **ERRORS}, operation_id="change_member")
@extend_schema(methods=["DELETE"], responses=NO_CONTENT, operation_id="remove_member")
@api_view(["PATCH", "DELETE"])
def member(request: Request, project_id: int, user_id: int) -> Response:
    project = check_project_access(request.user, project_id, Role.ADMIN)
    if request.method == "DELETE":
        m.do_remove_member(_user(request), project, user_id)
        return Response(status=204)
    body = parse(ChangeMemberSerializer, request.data)
    changed = m.do_change_role(_user(request), project, user_id, body["role"])
    return Response(m.member_dict(changed))


@extend_schema(methods=["GET"], responses={200: ok(doc.TOKENS), **ERRORS},
               operation_id="list_my_tokens")
@extend_schema(methods=["POST"], request=CreateTokenSerializer,
               responses={201: ok(doc.NEW_TOKEN), **ERRORS}, operation_id="create_my_token")
@api_view(["GET", "POST"])
def my_tokens(request: Request) -> Response:
    if request.method == "GET":
        return Response({"tokens": t.tokens_of(_user(request))})
    body = parse(CreateTokenSerializer, request.data)
    return Response(t.do_create_token(_user(request), _acting_token(request), body["name"],
                                      body.get("expires_at")), status=201)


@extend_schema(methods=["PATCH"], request=UpdateTokenSerializer,
               responses={200: ok(doc.TOKEN), **ERRORS}, operation_id="update_my_token")
@extend_schema(methods=["DELETE"], responses=NO_CONTENT, operation_id="revoke_my_token")
@api_view(["PATCH", "DELETE"])
def my_token(request: Request, token_id: int) -> Response:
    acting = _acting_token(request)
    token = t.check_own_token(_user(request), acting, token_id)
    if request.method == "DELETE":
        t.do_revoke_token(_user(request), token)
        return Response(status=204)
    changes: dict[str, Any] = parse(UpdateTokenSerializer, request.data)
    return Response(t.do_update_token(_user(request), acting, token, changes).to_dict())


@extend_schema(responses={200: ok(doc.PROJECT_TOKENS), **ERRORS},
               operation_id="list_project_tokens")
@api_view(["GET"])
def project_tokens(request: Request, project_id: int) -> Response:
    project = check_project_access(request.user, project_id, Role.ADMIN)
    return Response({"tokens": t.project_tokens(project)})


@extend_schema(responses=NO_CONTENT, operation_id="revoke_project_token")
@api_view(["DELETE"])
def project_token(request: Request, project_id: int, token_id: int) -> Response:
    project = check_project_access(request.user, project_id, Role.ADMIN)
    token = t.check_project_token(project, token_id)
    t.do_revoke_for_project(_user(request), project, token)
    return Response(status=204)
