"""Ops staff roll an agent back from the admin: the API's action (hash-verified,
audited with the staff member as actor); an agent with nothing to roll back to is a
message, never an error page; the timeline shows each rollout's action."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.test import Client

from deployments.models import Agent
from kionga.models import AuditEvent, Project
from tests.deploy_helpers import deploy_url
from tests.k8s_peer import Peer
from tests.test_deployments_rollback import two_versions
from tests.versions_helpers import prompt_graph, published

CHANGELIST = "/admin/deployments/agent/"


def test_staff_roll_an_agent_back(api: Any, staff: Client, carol: User, acme: Project,
                                  cluster: Peer) -> None:
    v1, _, agent_id = two_versions(api, carol, acme)
    page = staff.post(CHANGELIST, {"action": "rollback", "_selected_action": [agent_id]},
                      follow=True).content.decode()
    assert "rolled back to version 1" in page
    assert Agent.objects.get(pk=agent_id).version_id == v1.pk
    event = AuditEvent.objects.get(action="agent.rolled_back")
    assert event.actor is not None and event.actor.username == "ops"
    detail = staff.get(f"{CHANGELIST}{agent_id}/change/").content.decode()
    assert "<td>rollback</td>" in detail and "<td>deploy</td>" in detail


def test_nothing_to_roll_back_to_is_a_message(api: Any, staff: Client, carol: User,
                                              acme: Project, cluster: Peer) -> None:
    version = published(carol, acme, prompt_graph())
    agent = api.client_for(carol).post(deploy_url(version.pk), {}, format="json").json()
    response = staff.post(CHANGELIST, {"action": "rollback",
                                       "_selected_action": [agent["id"]]}, follow=True)
    assert response.status_code == 200
    assert "no earlier version to roll back to" in response.content.decode()
    assert not AuditEvent.objects.filter(action="agent.rolled_back").exists()


def test_only_staff_roll_back(api: Any, alice: User, carol: User, acme: Project,
                              cluster: Peer) -> None:
    _, v2, agent_id = two_versions(api, carol, acme)
    client = Client()
    client.force_login(alice)  # the project's admin, not ops staff
    client.post(CHANGELIST, {"action": "rollback", "_selected_action": [agent_id]})
    assert Agent.objects.get(pk=agent_id).version_id == v2.pk
