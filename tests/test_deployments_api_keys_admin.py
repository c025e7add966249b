"""Ops staff see agents' API keys in the admin (never their hash) and revoke them,
audited like a revocation through the API."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client

from deployments.models import AgentApiKey
from kionga.models import AuditEvent, Project
from tests.agent_key_helpers import deployed_agent, new_key


def test_staff_list_and_revoke_api_keys(staff: Client, carol: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    key_id, raw = new_key(carol, agent)
    page = staff.get("/admin/deployments/agentapikey/").content.decode()
    key = AgentApiKey.objects.get(pk=key_id)
    assert key.prefix in page and key.token_hash not in page and raw not in page
    detail = staff.get(f"/admin/deployments/agentapikey/{key_id}/change/").content.decode()
    assert key.token_hash not in detail and 'name="_save"' not in detail
    staff.post("/admin/deployments/agentapikey/", {"action": "revoke",
                                                    "_selected_action": [key_id]})
    key.refresh_from_db()
    assert key.revoked_at is not None
    event = AuditEvent.objects.get(action="agent.api_key_revoked")
    assert event.actor is not None and event.actor.username == "ops"


def test_only_staff_see_api_keys(alice: User, carol: User, acme: Project) -> None:
    key_id, _ = new_key(carol, deployed_agent(carol, acme))
    client = Client()
    client.force_login(alice)  # the project's admin, not ops staff
    assert client.get("/admin/deployments/agentapikey/").status_code == 302
    client.post("/admin/deployments/agentapikey/", {"action": "revoke",
                                                     "_selected_action": [key_id]})
    assert AgentApiKey.objects.get(pk=key_id).revoked_at is None
