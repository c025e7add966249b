"""Helpers of the projects self-administration tests (members, tokens, resources)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from rest_framework.test import APIClient

from kionga.models import Project
from tests.conftest import CheckedClient

MY_TOKENS = "/api/v1/me/tokens"


def members_url(project: Project) -> str:
    return f"/api/v1/projects/{project.pk}/members"


def resources_url(project: Project, kind: str = "") -> str:
    return f"/api/v1/projects/{project.pk}/resources" + (f"/{kind}" if kind else "")


def bearer(raw: str) -> APIClient:
    """A client sending the bearer token raw."""
    client = CheckedClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def signed_in(user: User) -> APIClient:
    """A client of the person signed in (session), with no token."""
    client = CheckedClient()
    client.force_login(user)
    return client


def made_token(client: APIClient, name: str, **body: Any) -> dict[str, Any]:
    """The answer of POST /api/v1/me/tokens by client: the new token, shown this once."""
    answer = client.post(MY_TOKENS, {"name": name, **body}, format="json")
    assert answer.status_code == 201, answer.content
    return dict(answer.json())


def invitations_url(project: Project) -> str:
    return f"/api/v1/projects/{project.pk}/invitations"


def invite(client: APIClient, project: Project, user: str, role: str) -> dict[str, Any]:
    """The answer of POST projects/{id}/members by client (an admin): the invitation."""
    answer = client.post(members_url(project), {"user": user, "role": role}, format="json")
    assert answer.status_code == 202, answer.content
    return dict(answer.json())


def accept(client: APIClient, invitation_id: str) -> Any:
    return client.post(f"/api/v1/me/invitations/{invitation_id}/accept")
