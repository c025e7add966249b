"""`kionga members invite EMAIL --project N --role R` against the real gateway (Django's
live server on loopback): a project admin invites by email and is told so in a sentence
or the kionga/1 envelope; the invitation is stored pending with that role; a viewer's
invite is FORBIDDEN (exit 8)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from django.contrib.auth.models import User

from contracts.schemas import schema_errors
from kionga.models import Invitation, Project
from kionga.tokens import issue_token
from kionga_client.cli import cli


def kionga(live_server: Any, user: User, *args: str) -> Any:
    env = {"KIONGA_URL": live_server.url, "KIONGA_TOKEN": issue_token(user, name="cli"),
           "KIONGA_TOKEN_FILE": ""}
    return CliRunner().invoke(cli, list(args), env=env)


@pytest.mark.django_db(transaction=True)
def test_an_admin_invites_by_email(live_server: Any, alice: User, bob: User,
                                   acme: Project) -> None:
    said = kionga(live_server, alice, "members", "invite", "Dana@Example.com",
                  "--project", str(acme.pk), "--role", "editor")
    assert said.exit_code == 0, said.output
    assert f"Invited dana@example.com to project {acme.pk} as editor" in said.output
    invitation = Invitation.objects.get(project=acme, address="dana@example.com")
    assert (invitation.role, invitation.status) == ("editor", "pending")

    envelope = json.loads(kionga(live_server, alice, "members", "invite", "erin@example.com",
                                 "--project", str(acme.pk), "--json").output)
    assert schema_errors("cli-envelope.v1", envelope) == []
    assert envelope["ok"] and envelope["data"]["role"] == "viewer"
    assert envelope["data"]["id"] == str(Invitation.objects.get(address="erin@example.com").pk)

    refused = json.loads(kionga(live_server, bob, "members", "invite", "x@example.com",
                                "--project", str(acme.pk), "--json").output)
    assert not refused["ok"] and refused["exit_code"] == 8, refused
    assert refused["error"]["code"] == "FORBIDDEN"
