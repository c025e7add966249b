"""`kionga agents canary start|status|promote|rollback` and the MCP canary tools against
the real gateway (Django's live server on loopback) and a loopback Kubernetes API: a
canary started by version number keeps the agent's pod settings, its status shows both
versions side by side, promote and rollback say what they did; refusals have stable codes
and exit statuses; another project's agent is AGENT_NOT_FOUND; the MCP tools act only
once their previewed call is confirmed."""

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
from tests.k8s_peer import Peer
from tests.test_deployments_canary import SMALL, running_with_next


def kionga(live_server: Any, user: User, *args: str) -> Any:
    env = {"KIONGA_URL": live_server.url, "KIONGA_TOKEN": issue_token(user, name="cli"),
           "KIONGA_TOKEN_FILE": ""}
    return CliRunner().invoke(cli, list(args), env=env)


def envelope(result: Any) -> dict[str, Any]:
    answer = json.loads(result.output)
    assert schema_errors("cli-envelope.v1", answer) == []
    return dict(answer)


@pytest.mark.django_db(transaction=True)
def test_start_status_promote(live_server: Any, api: Any, alice: User, acme: Project,
                              cluster: Peer) -> None:
    v1, v2, agent_id = running_with_next(api, alice, acme)
    name = f"agent-{agent_id.replace('-', '')[:12]}"
    said = kionga(live_server, alice, "agents", "canary", "start", agent_id,
                  "--version", "2", "--percent", "25")
    assert said.exit_code == 0, said.output
    assert said.output.startswith(f"Agent {name} runs version 1; canary version 2 serves "
                                  "25 % of the turns.")
    agent = Agent.objects.get(pk=agent_id)
    assert (agent.canary_version_id, agent.canary_percent) == (v2.pk, 25)
    assert agent.settings["autoscaling"] == SMALL["autoscaling"]  # the agent's own, kept

    status = envelope(kionga(live_server, alice, "agents", "canary", "status", agent_id,
                             "--json"))
    assert status["ok"] and status["data"]["canary"]["percent"] == 25
    assert [(v["role"], v["version"]) for v in status["data"]["versions"]] == [
        ("current", 1), ("canary", 2)]
    table = kionga(live_server, alice, "agents", "canary", "status", agent_id)
    assert table.exit_code == 0 and "p95_ms" in table.output and "canary" in table.output

    promoted = envelope(kionga(live_server, alice, "agents", "canary", "promote", agent_id,
                               "--json"))
    assert promoted["ok"] and promoted["data"]["version"] == 2
    assert promoted["data"]["canary"] is None
    assert Agent.objects.get(pk=agent_id).version_id == v2.pk


@pytest.mark.django_db(transaction=True)
def test_rollback_and_refusals(live_server: Any, api: Any, alice: User, mallory: User,
                               acme: Project, cluster: Peer) -> None:
    v1, v2, agent_id = running_with_next(api, alice, acme)
    none = kionga(live_server, alice, "agents", "canary", "rollback", agent_id, "--json")
    assert none.exit_code == 8 and envelope(none)["error"]["code"] == "NO_CANARY"
    assert Agent.objects.get(pk=agent_id).version_id == v1.pk  # not rolled back to anything
    bad = kionga(live_server, alice, "agents", "canary", "start", agent_id, "--version", "2",
                 "--percent", "100", "--json")
    assert bad.exit_code == 2 and envelope(bad)["error"]["code"] == "USAGE"
    same = kionga(live_server, alice, "agents", "canary", "start", agent_id, "--version", "1",
                  "--percent", "10", "--json")
    assert same.exit_code == 8 and envelope(same)["error"]["code"] == "CANARY_SAME_VERSION"
    missing = kionga(live_server, alice, "agents", "canary", "start", agent_id, "--version",
                     "9", "--percent", "10", "--json")
    assert missing.exit_code == 7 and envelope(missing)["error"]["code"] == "VERSION_NOT_FOUND"
    for command in ("status", "promote", "rollback"):
        hidden = kionga(live_server, mallory, "agents", "canary", command, agent_id, "--json")
        assert hidden.exit_code == 7 and envelope(hidden)["error"]["code"] == "AGENT_NOT_FOUND"

    assert kionga(live_server, alice, "agents", "canary", "start", agent_id, "--version",
                  str(v2.pk), "--percent", "10").exit_code == 0
    rolled = kionga(live_server, alice, "agents", "canary", "rollback", agent_id)
    assert rolled.exit_code == 0, rolled.output
    assert rolled.output.startswith("Agent ") and "runs version 1; no canary." in rolled.output
    agent = Agent.objects.get(pk=agent_id)
    assert (agent.version_id, agent.canary_version_id) == (v1.pk, None)


@pytest.mark.django_db(transaction=True)
def test_the_mcp_tools_act_once_confirmed(live_server: Any, api: Any, alice: User,
                                          acme: Project, cluster: Peer) -> None:
    v1, v2, agent_id = running_with_next(api, alice, acme)
    settings = Settings(url=live_server.url, token=issue_token(alice, name="mcp"))
    confirmations = Confirmations()
    args = {"agent_id": agent_id, "version": "2", "percent": 40}
    preview = call_tool(settings, confirmations, "agents_canary_start", args)
    assert preview["error"]["code"] == "CONFIRMATION_REQUIRED"
    assert preview["data"]["preview"]["will"].startswith("send 40 % of agent agent-")
    assert Agent.objects.get(pk=agent_id).canary_version_id is None
    done = call_tool(settings, confirmations, "agents_canary_start", {
        **args, "confirm": True, "confirmation_token": preview["data"]["confirmation_token"]})
    assert done["ok"] and done["data"]["canary"]["percent"] == 40, done
    status = call_tool(settings, confirmations, "agents_canary_status", {"agent_id": agent_id})
    assert [v["role"] for v in status["data"]["versions"]] == ["current", "canary"]
    preview = call_tool(settings, confirmations, "agents_canary_promote", {"agent_id": agent_id})
    done = call_tool(settings, confirmations, "agents_canary_promote", {
        "agent_id": agent_id, "confirm": True,
        "confirmation_token": preview["data"]["confirmation_token"]})
    assert done["ok"] and done["data"]["version"] == 2, done
