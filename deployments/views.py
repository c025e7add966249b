"""Deploy a version; read agents and their rollout timelines."""

from __future__ import annotations

import uuid

from django.contrib.auth.models import User
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.response import Response

from deployments import openapi as doc
from deployments.agents import agent_dict, agents_of, check_agent_access
from deployments.api_keys import check_key, do_create_key, do_revoke_key, keys_of
from deployments.deploy import DeployRequest, do_deploy
from deployments.promote import do_promote
from deployments.rollback import do_rollback
from deployments.serializers import CreateApiKeySerializer, DeploySerializer
from designs.versions import check_version_access
from kionga.models import Role
from kionga.openapi import ERRORS, ok
from kionga.request_body import parse


@extend_schema(request=DeploySerializer,
               responses={201: ok(doc.AGENT_WITH_ROLLOUTS), 200: ok(doc.AGENT_WITH_ROLLOUTS),
                          **ERRORS}, operation_id="deploy_version")
@api_view(["POST"])
def deploy(request: Request, version_id: uuid.UUID) -> Response:
    version = check_version_access(request.user, version_id, Role.EDITOR)
    body = parse(DeploySerializer, request.data)
    assert isinstance(request.user, User)
    agent, created = do_deploy(request.user, version, DeployRequest(**body))
    return Response(agent_dict(agent), status=201 if created else 200)


@extend_schema(parameters=[OpenApiParameter("project_id", int, required=False)],
               responses={200: ok(doc.AGENT_LIST), **ERRORS}, operation_id="list_agents")
@api_view(["GET"])
def agents(request: Request) -> Response:
    found = agents_of(request.user, request.query_params.get("project_id"))
    return Response({"agents": [agent.summary() for agent in found]})


@extend_schema(responses={200: ok(doc.AGENT_WITH_ROLLOUTS), **ERRORS}, operation_id="get_agent")
@api_view(["GET"])
def agent(request: Request, agent_id: uuid.UUID) -> Response:
    return Response(agent_dict(check_agent_access(request.user, agent_id)))


@extend_schema(request=None, responses={200: ok(doc.AGENT_WITH_ROLLOUTS), **ERRORS},
               operation_id="rollback_agent")
@api_view(["POST"])
def rollback(request: Request, agent_id: uuid.UUID) -> Response:
    agent = check_agent_access(request.user, agent_id, Role.EDITOR)
    assert isinstance(request.user, User)
    return Response(agent_dict(do_rollback(request.user, agent)))


@extend_schema(request=None, responses={200: ok(doc.AGENT_WITH_ROLLOUTS), **ERRORS},
               operation_id="promote_agent_canary")
@api_view(["POST"])
def promote(request: Request, agent_id: uuid.UUID) -> Response:
    agent = check_agent_access(request.user, agent_id, Role.EDITOR)
    assert isinstance(request.user, User)
    return Response(agent_dict(do_promote(request.user, agent)))


@extend_schema(methods=["GET"], responses={200: ok(doc.API_KEYS), **ERRORS},
               operation_id="list_agent_api_keys")
@extend_schema(methods=["POST"], request=CreateApiKeySerializer,
               responses={201: ok(doc.NEW_API_KEY), **ERRORS},
               operation_id="create_agent_api_key")
@api_view(["GET", "POST"])
def api_keys(request: Request, agent_id: uuid.UUID) -> Response:
    if request.method == "GET":
        return Response({"api_keys": keys_of(check_agent_access(request.user, agent_id))})
    agent = check_agent_access(request.user, agent_id, Role.EDITOR)
    body = parse(CreateApiKeySerializer, request.data)
    assert isinstance(request.user, User)
    return Response(do_create_key(request.user, agent, body["name"], body["rate_per_minute"],
                                  body["expires_at"]), status=201)


@extend_schema(responses={204: None, **ERRORS}, operation_id="revoke_agent_api_key")
@api_view(["DELETE"])
def api_key(request: Request, agent_id: uuid.UUID, key_id: uuid.UUID) -> Response:
    agent = check_agent_access(request.user, agent_id, Role.EDITOR)
    assert isinstance(request.user, User)
    do_revoke_key(request.user, agent, check_key(agent, key_id))
    return Response(status=204)
