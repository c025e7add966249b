"""Ops staff promote or roll back an agent's canary from the admin: the API's actions
(hash-verified, audited with the staff member as actor); no canary is a message, never an
error page; the agents list and page show the canary."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.test import Client

from deployments.models import Agent
from kionga.models import AuditEvent, Project
from tests.deploy_helpers import deploy_url
from tests.k8s_peer import Peer
from tests.test_deployments_canary import running_with_next

CHANGELIST = "/admin/deployments/agent/"


def test_staff_promote_a_canary(api: Any, staff: Client, alice: User, acme: Project,
                                cluster: Peer) -> None:
    _, v2, agent_id = running_with_next(api, alice, acme)
    api.client_for(alice).post(deploy_url(v2.pk), {"canary_percent": 15}, format="json")
    assert "version 2 at 15 %" in staff.get(CHANGELIST).content.decode()
    page = staff.post(CHANGELIST, {"action": "promote", "_selected_action": [agent_id]},
                      follow=True).content.decode()
    assert "now runs version 2 (canary promoted)" in page
    agent = Agent.objects.get(pk=agent_id)
    assert (agent.version_id, agent.canary_version_id) == (v2.pk, None)
    event = AuditEvent.objects.get(action="agent.canary_promoted")
    assert event.actor is not None and event.actor.username == "ops"
    detail = staff.get(f"{CHANGELIST}{agent_id}/change/").content.decode()
    assert "<td>promote</td>" in detail and "<td>canary</td>" in detail

    again = staff.post(CHANGELIST, {"action": "promote", "_selected_action": [agent_id]},
                       follow=True)
    assert again.status_code == 200
    assert "runs no canary to promote" in again.content.decode()


def test_staff_roll_a_canary_back(api: Any, staff: Client, alice: User, acme: Project,
                                  cluster: Peer) -> None:
    v1, v2, agent_id = running_with_next(api, alice, acme)
    api.client_for(alice).post(deploy_url(v2.pk), {"canary_percent": 15}, format="json")
    page = staff.post(CHANGELIST, {"action": "rollback", "_selected_action": [agent_id]},
                      follow=True).content.decode()
    assert "rolled back to version 1" in page
    agent = Agent.objects.get(pk=agent_id)
    assert (agent.version_id, agent.canary_version_id) == (v1.pk, None)
    event = AuditEvent.objects.get(action="agent.rolled_back")
    assert event.actor is not None and event.actor.username == "ops"
