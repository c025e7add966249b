"""`kionga agents rollback AGENT_ID` and the MCP tool `agents_rollback` against the real
gateway (Django's live server on loopback) and a loopback Kubernetes API: the agent back
on the version it ran before, said in a sentence or as the kionga/1 envelope; nothing to
roll back to is NO_PREVIOUS_VERSION (exit 8); another tenant's agent is AGENT_NOT_FOUND
(exit 7); the MCP tool acts only when its previewed call is confirmed."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from django.contrib.auth.models import User

from contracts.schemas import schema_errors
from deployments.models import Agent
from kionga.models import Project
from kionga.tokens import issue_token
from kionga_client.cli import cli
from kionga_client.confirmations import Confirmations
from kionga_client.gateway import Settings
from kionga_client.mcp_server import call_tool
from tests.deploy_helpers import deploy_url
from tests.k8s_peer import Peer
from tests.test_deployments_rollback import two_versions
from tests.versions_helpers import prompt_graph, published


def kionga(live_server: Any, user: User, *args: str) -> Any:
    env = {"KIONGA_URL": live_server.url, "KIONGA_TOKEN": issue_token(user, name="cli"),
           "KIONGA_TOKEN_FILE": ""}
    return CliRunner().invoke(cli, list(args), env=env)


@pytest.mark.django_db(transaction=True)
def test_it_rolls_an_agent_back(live_server: Any, api: Any, carol: User, acme: Project,
                                cluster: Peer) -> None:
    v1, _, agent_id = two_versions(api, carol, acme)
    said = kionga(live_server, carol, "agents", "rollback", agent_id)
    assert said.exit_code == 0, said.output
    assert said.output.startswith(f"Agent agent-{agent_id.replace('-', '')[:12]} rolled "
                                  f"back to version 1 (sha256 {v1.content_sha256[:12]}…).")
    answer = json.loads(kionga(live_server, carol, "agents", "rollback", agent_id,
                               "--json").output)
    assert schema_errors("cli-envelope.v1", answer) == []
    assert answer["ok"] and answer["data"]["version"] == 2
    assert answer["data"]["agent_id"] == agent_id
    listed = json.loads(kionga(live_server, carol, "agents", "list", "--json").output)
    assert [a["id"] for a in listed["data"]["agents"]] == [agent_id]


@pytest.mark.django_db(transaction=True)
def test_it_says_why_it_cannot(live_server: Any, api: Any, carol: User, mallory: User,
                               acme: Project, cluster: Peer) -> None:
    version = published(carol, acme, prompt_graph())
    agent = api.client_for(carol).post(deploy_url(version.pk), {}, format="json").json()
    answer = kionga(live_server, carol, "agents", "rollback", agent["id"], "--json")
    assert answer.exit_code == 8
    assert json.loads(answer.output)["error"]["code"] == "NO_PREVIOUS_VERSION"
    hidden = kionga(live_server, mallory, "agents", "rollback", agent["id"], "--json")
    assert hidden.exit_code == 7
    assert json.loads(hidden.output)["error"]["code"] == "AGENT_NOT_FOUND"
    assert Agent.objects.get(pk=agent["id"]).version_id == version.pk


@pytest.mark.django_db(transaction=True)
def test_the_mcp_tool_rolls_back_once_confirmed(live_server: Any, api: Any, carol: User,
                                                acme: Project, cluster: Peer) -> None:
    v1, v2, agent_id = two_versions(api, carol, acme)
    settings = Settings(url=live_server.url, token=issue_token(carol, name="mcp"))
    confirmations = Confirmations()
    preview = call_tool(settings, confirmations, "agents_rollback", {"agent_id": agent_id})
    assert preview["error"]["code"] == "CONFIRMATION_REQUIRED"
    assert preview["data"]["preview"]["version"] == 2
    assert Agent.objects.get(pk=agent_id).version_id == v2.pk
    done = call_tool(settings, confirmations, "agents_rollback", {
        "agent_id": agent_id, "confirm": True,
        "confirmation_token": preview["data"]["confirmation_token"]})
    assert done["ok"] and done["data"]["version"] == 1, done
    assert schema_errors("cli-envelope.v1", done) == []
    assert Agent.objects.get(pk=agent_id).version_id == v1.pk
