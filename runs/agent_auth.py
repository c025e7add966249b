"""Deployed agents on the internal listener: their credential, and the turn it acts for.

The agent runtime authenticates with its agent credential (`kag_`, deployments.credentials):
the agent's project identity, never a person's. It opens a turn (POST agent-turns, a
Run row with `agent` set and the resources of the version it serves) and sends
`X-Kionga-Turn: <turn id>` with every resource and approval call of that turn, so the
same routes, scope checks and billing as a run's apply. Revoking the credential stops
every call at once (401 invalid_credential).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import AnonymousUser
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import extend_schema
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.decorators import api_view, authentication_classes, permission_classes
from rest_framework.permissions import AllowAny
from rest_framework.request import Request

from contracts.agent_runtime import TURN_HEADER
from deployments.credentials import find_agent
from deployments.models import Agent
from kionga.errors import APIError
from runs.models import ACTIVE_STATUSES, Run


def _invalid(message: str) -> APIError:
    error = APIError(401, "invalid_credential", message)
    error.auth_header = 'Bearer realm="internal"'  # type: ignore[attr-defined]
    return error


def check_agent(raw: str) -> Agent:
    agent = find_agent(raw)
    if agent is None:
        raise _invalid("The agent credential is unknown or revoked.")
    return agent


def agent_turn(request: Request, raw: str) -> Run:
    """The open turn named by X-Kionga-Turn, of the agent whose credential `raw` is."""
    agent = check_agent(raw)
    try:
        turn_id = uuid.UUID(request.headers.get(TURN_HEADER, ""))
    except ValueError:
        raise _invalid(f"An agent calls resources for a turn: send {TURN_HEADER}.") from None
    turn = (Run.objects.select_related("project").filter(
        pk=turn_id, agent=agent, status__in=ACTIVE_STATUSES).first())
    if turn is None:
        raise _invalid("The turn is unknown, of another agent, or has ended.")
    return turn


class AgentCredentialAuthentication(BaseAuthentication):
    """request.auth = the Agent; request.user anonymous. 401 otherwise."""

    def authenticate(self, request: Request) -> tuple[AnonymousUser, Agent]:
        parts = get_authorization_header(request).split()
        if len(parts) != 2 or parts[0].lower() != b"bearer":
            raise _invalid("Send 'Authorization: Bearer <agent credential>'.")
        return AnonymousUser(), check_agent(parts[1].decode("latin-1"))

    def authenticate_header(self, request: Request) -> str:
        return 'Bearer realm="internal"'


def agent_view(methods: list[str], **schema: Any) -> Callable[[Callable[..., Any]], Any]:
    """@api_view for the agent runtime's own routes: agent credential only."""

    def wrap(func: Callable[..., Any]) -> Any:
        func = permission_classes([AllowAny])(func)
        func = authentication_classes([AgentCredentialAuthentication])(func)
        return extend_schema(**schema)(api_view(methods)(func))

    return wrap


def agent_of(request: Request) -> Agent:
    assert isinstance(request.auth, Agent)
    return request.auth


class AgentCredentialScheme(OpenApiAuthenticationExtension):
    target_class = "runs.agent_auth.AgentCredentialAuthentication"
    name = "agentCredential"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "bearerFormat": "kag_<agent credential>"}
