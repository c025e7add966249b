"""Agent API keys in the gateway's API: editors create them (the key shown once, only its
hash stored), viewers list them (never the key), editors revoke them; audited; another
project's agent is a 404."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from deployments.models import AgentApiKey
from kionga.models import AuditEvent, Project
from kionga.tokens import hash_token
from tests.agent_key_helpers import deployed_agent, keys_url
from tests.conftest import Api


def test_an_editor_creates_a_key_shown_once_and_stored_hashed(
        api: Api, carol: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    made = api.client_for(carol).post(keys_url(agent), {"name": "shop", "rate_per_minute": 5},
                                      format="json")
    assert made.status_code == 201, made.content
    body = made.json()
    raw = body["key"]
    assert raw.startswith("kak_") and len(raw) > 40 and body["prefix"] == raw[:8]
    assert body["rate_per_minute"] == 5 and body["revoked_at"] is None
    expires = datetime.fromisoformat(body["expires_at"])
    assert timedelta(days=89) < expires - timezone.now() < timedelta(days=91)
    row = AgentApiKey.objects.get(pk=body["id"])
    assert row.token_hash == hash_token(raw) and raw not in str(row.__dict__)
    listed = api.client_for(carol).get(keys_url(agent)).json()["api_keys"]
    assert [k["id"] for k in listed] == [body["id"]] and "key" not in listed[0]
    assert raw not in api.client_for(carol).get(keys_url(agent)).content.decode()
    event = AuditEvent.objects.get(action="agent.api_key_created")
    assert event.details["key_id"] == body["id"] and raw not in str(event.details)


def test_a_viewer_lists_but_neither_creates_nor_revokes(
        api: Api, carol: User, bob: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    made = api.client_for(carol).post(keys_url(agent), {"name": "a"}, format="json").json()
    viewer = api.client_for(bob)
    assert viewer.get(keys_url(agent)).status_code == 200
    api.assert_error(viewer.post(keys_url(agent), {"name": "b"}, format="json"), 403,
                     "forbidden")
    api.assert_error(viewer.delete(keys_url(agent, made["id"])), 403, "forbidden")
    assert AgentApiKey.objects.filter(revoked_at__isnull=True).count() == 1


def test_another_projects_agent_and_its_keys_are_not_found(
        api: Api, carol: User, mallory: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    made = api.client_for(carol).post(keys_url(agent), {"name": "a"}, format="json").json()
    other = api.client_for(mallory)
    api.assert_error(other.get(keys_url(agent)), 404, "not_found")
    api.assert_error(other.post(keys_url(agent), {"name": "b"}, format="json"), 404,
                     "not_found")
    api.assert_error(other.delete(keys_url(agent, made["id"])), 404, "not_found")
    assert AgentApiKey.objects.get(pk=made["id"]).revoked_at is None


def test_revoking_is_audited_once(api: Api, carol: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    client = api.client_for(carol)
    made = client.post(keys_url(agent), {"name": "a"}, format="json").json()
    assert client.delete(keys_url(agent, made["id"])).status_code == 204
    assert client.delete(keys_url(agent, made["id"])).status_code == 204
    assert AgentApiKey.objects.get(pk=made["id"]).revoked_at is not None
    assert AuditEvent.objects.filter(action="agent.api_key_revoked").count() == 1
    listed = client.get(keys_url(agent)).json()["api_keys"]
    assert listed[0]["revoked_at"] is not None


def test_it_refuses_bad_bodies(api: Api, carol: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    client = api.client_for(carol)
    past = (timezone.now() - timedelta(minutes=1)).isoformat()
    for body, field in [({"name": "a", "expires_at": past}, "expires_at"),
                        ({"name": "a", "rate_per_minute": 0}, "rate_per_minute"),
                        ({"name": "a", "scope": "all"}, "scope"), ({}, "name")]:
        error = api.assert_error(client.post(keys_url(agent), body, format="json"), 400,
                                 "invalid_request")
        assert field in error["details"]["fields"], error
    assert not AgentApiKey.objects.exists()
