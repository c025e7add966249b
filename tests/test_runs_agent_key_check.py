"""The internal listener verifies the agent runtime's caller's API key at every request:
opening a turn and `agent-keys/check` need a live key of that agent (401 invalid_api_key
otherwise: missing, unknown, another agent's, revoked — at once —, expired) and count it
against the key's rate (429 throttled with Retry-After beyond it); a turn opened for a
request counted already (`key_counted`) is verified but not counted again."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from contracts.agent_runtime import KEY_HEADER
from deployments.api_keys import do_revoke_key
from deployments.credentials import issue_credential
from deployments.models import Agent, AgentApiKey
from kionga.models import Project
from kionga.redis_client import sync_redis
from runs.models import Run
from tests.agent_key_helpers import deployed_agent, new_key
from tests.conftest import Api
from tests.internal_helpers import BASE, INTERNAL_URLS, run_client


@pytest.fixture(autouse=True)
def fresh_windows() -> Iterator[None]:
    for key in sync_redis().scan_iter("kionga:throttle:agent-key:*"):
        sync_redis().delete(key)
    with override_settings(ROOT_URLCONF=INTERNAL_URLS):
        yield


def _open(client: APIClient, agent: Agent, key: str | None, **body: Any) -> Any:
    headers = {} if key is None else {KEY_HEADER: key}
    return client.post(f"{BASE}agent-turns", {"version_id": str(agent.version_id),
                                              "input": "hi", **body},
                       format="json", headers=headers)


def test_a_live_key_opens_a_turn(carol: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    _, key = new_key(carol, agent)
    opened = _open(run_client(issue_credential(agent)), agent, key)
    assert opened.status_code == 201, opened.content
    assert Run.objects.get(pk=opened.json()["turn_id"]).agent_id == agent.pk
    assert AgentApiKey.objects.get().last_used_at is not None


def test_it_refuses_a_missing_unknown_foreign_revoked_or_expired_key(
        api: Api, carol: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    other = deployed_agent(carol, acme, name="agent-other")
    _, foreign = new_key(carol, other)
    revoked_id, revoked = new_key(carol, agent)
    do_revoke_key(carol, agent, AgentApiKey.objects.get(pk=revoked_id))
    expired_id, expired = new_key(carol, agent)
    AgentApiKey.objects.filter(pk=expired_id).update(expires_at=timezone.now() - timedelta(1))
    client = run_client(issue_credential(agent))
    for key in (None, "", "kak_unknown", foreign, revoked, expired, "kio_not_a_key"):
        api.assert_error(_open(client, agent, key), 401, "invalid_api_key")
        answer = client.post(f"{BASE}agent-keys/check",
                             headers={} if key is None else {KEY_HEADER: key})
        error = api.assert_error(answer, 401, "invalid_api_key")
        assert answer["WWW-Authenticate"] == 'Bearer realm="agent"', error
    assert not Run.objects.exists()


def test_revoking_takes_effect_at_the_next_request(carol: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    key_id, key = new_key(carol, agent)
    client = run_client(issue_credential(agent))
    assert client.post(f"{BASE}agent-keys/check", headers={KEY_HEADER: key}).status_code == 200
    do_revoke_key(carol, agent, AgentApiKey.objects.get(pk=key_id))
    assert client.post(f"{BASE}agent-keys/check", headers={KEY_HEADER: key}).status_code == 401


def test_beyond_its_rate_a_key_is_429_with_retry_after(
        api: Api, carol: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    _, key = new_key(carol, agent, rate=2)
    _, other = new_key(carol, agent, rate=2)
    client = run_client(issue_credential(agent))
    assert client.post(f"{BASE}agent-keys/check", headers={KEY_HEADER: key}).status_code == 200
    assert _open(client, agent, key).status_code == 201
    # Verified but not counted: the runtime counted this request already.
    assert _open(client, agent, key, key_counted=True).status_code == 201
    refused = _open(client, agent, key)
    api.assert_error(refused, 429, "throttled")
    assert 1 <= int(refused["Retry-After"]) <= 60
    api.assert_error(client.post(f"{BASE}agent-keys/check", headers={KEY_HEADER: key}), 429,
                     "throttled")
    # Each key has its own window.
    assert _open(client, agent, other).status_code == 201
    assert Run.objects.count() == 3
