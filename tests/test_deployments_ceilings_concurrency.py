"""Concurrent deploys on PostgreSQL cannot both take a project's last room: the project's
ceilings are checked under its row lock, in the transaction that creates the agent."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from deployments.models import Agent
from tests.conftest import Api
from tests.deploy_helpers import deploy_url
from tests.k8s_peer import Peer
from tests.versions_helpers import prompt_graph, published

pytestmark = pytest.mark.django_db(transaction=True)


def _deploy_at_once(api: Api, user: Any, version_ids: list[Any]) -> list[int]:
    tokens = [api.token_for(user) for _ in version_ids]
    barrier = threading.Barrier(len(version_ids))
    statuses: list[int] = []

    def post(token: str, version_id: Any) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        barrier.wait()
        try:
            statuses.append(client.post(deploy_url(version_id), {}, format="json").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=post, args=pair)
               for pair in zip(tokens, version_ids, strict=True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return statuses


def test_two_deploys_cannot_both_take_the_last_agent(api: Api, carol: Any, acme: Any,
                                                     cluster: Peer, settings: Any) -> None:
    settings.KIONGA_PROJECT_MAX_AGENTS = 1
    versions = [published(carol, acme, prompt_graph(), name=f"Flow {n}").pk for n in range(3)]
    assert sorted(_deploy_at_once(api, carol, versions)) == [201, 409, 409]
    assert Agent.objects.filter(project=acme).count() == 1
