"""`kionga agents triggers …` against the real gateway (Django's live server on
loopback): an editor creates a webhook (its secret printed once) and a schedule, lists,
shows, disables, updates and deletes them, as sentences or kionga/1 envelopes; a wrong
cron is USAGE (exit 2) naming the field; another tenant's agent is AGENT_NOT_FOUND and
its trigger TRIGGER_NOT_FOUND (exit 7)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from django.contrib.auth.models import User

from contracts.schemas import schema_errors
from kionga.models import Project
from kionga.tokens import issue_token
from kionga_client.cli import cli
from tests.agent_key_helpers import deployed_agent
from triggers.models import Trigger

pytestmark = pytest.mark.django_db(transaction=True)


def kionga(live_server: Any, user: User, *args: str) -> Any:
    env = {"KIONGA_URL": live_server.url, "KIONGA_TOKEN": issue_token(user, name="cli"),
           "KIONGA_TOKEN_FILE": "", "COLUMNS": "200"}
    return CliRunner().invoke(cli, list(args), env=env)


def envelope(live_server: Any, user: User, *args: str) -> dict[str, Any]:
    answer: dict[str, Any] = json.loads(kionga(live_server, user, *args, "--json").output)
    assert schema_errors("cli-envelope.v1", answer) == [], answer
    return answer


def test_an_editor_manages_triggers(live_server: Any, carol: User, acme: Project) -> None:
    agent_id = str(deployed_agent(carol, acme).pk)
    said = kionga(live_server, carol, "agents", "triggers", "create-webhook", agent_id,
                  "--name", "orders")
    assert said.exit_code == 0, said.output
    hook = Trigger.objects.get(name="orders")
    assert f"Webhook orders ({hook.pk}): POST /api/v1/hooks/{hook.pk}, enabled." in said.output
    assert f"Signing secret (shown this once): {hook.secret}" in said.output
    made = envelope(live_server, carol, "agents", "triggers", "create-schedule", agent_id,
                    "--name", "morning", "--cron", "0 9 * * mon-fri", "--timezone",
                    "Europe/Paris", "--input", "plan the day")
    assert made["ok"] and made["data"]["timezone"] == "Europe/Paris"
    schedule_id = made["data"]["trigger_id"]
    listed = envelope(live_server, carol, "agents", "triggers", "list", agent_id)
    assert {t["name"] for t in listed["data"]["triggers"]} == {"orders", "morning"}
    assert hook.secret not in json.dumps(listed)
    table = kionga(live_server, carol, "agents", "triggers", "list", agent_id)
    assert table.exit_code == 0 and "orders" in table.output and "0 9 * * mon-fri" in table.output
    off = kionga(live_server, carol, "agents", "triggers", "disable", agent_id, schedule_id)
    assert "'0 9 * * mon-fri' in Europe/Paris, disabled." in off.output, off.output
    changed = envelope(live_server, carol, "agents", "triggers", "update", agent_id,
                       schedule_id, "--cron", "30 8 * * *")
    assert (changed["data"]["cron"], changed["data"]["enabled"]) == ("30 8 * * *", False)
    wrong = envelope(live_server, carol, "agents", "triggers", "update", agent_id,
                     schedule_id, "--cron", "30 8 * *")
    assert (wrong["exit_code"], wrong["error"]["code"]) == (2, "USAGE")
    assert "cron" in wrong["error"]["message"]
    shown = envelope(live_server, carol, "agents", "triggers", "show", agent_id, str(hook.pk))
    assert shown["data"]["firings"] == [] and "secret" not in shown["data"]
    gone = envelope(live_server, carol, "agents", "triggers", "delete", agent_id, schedule_id)
    assert gone["ok"] and not Trigger.objects.filter(pk=schedule_id).exists()


def test_another_tenants_triggers_are_not_found(live_server: Any, carol: User,
                                                mallory: User, acme: Project) -> None:
    agent_id = str(deployed_agent(carol, acme).pk)
    made = envelope(live_server, carol, "agents", "triggers", "create-webhook", agent_id,
                    "--name", "orders")
    hidden = envelope(live_server, mallory, "agents", "triggers", "list", agent_id)
    assert (hidden["exit_code"], hidden["error"]["code"]) == (7, "AGENT_NOT_FOUND")
    hidden = envelope(live_server, mallory, "agents", "triggers", "disable", agent_id,
                      made["data"]["trigger_id"])
    assert (hidden["exit_code"], hidden["error"]["code"]) == (7, "TRIGGER_NOT_FOUND")
    assert Trigger.objects.get().enabled
