"""Concurrent publishes on PostgreSQL: distinct consecutive numbers, one version per behaviour."""

import threading
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from designs.models import Version
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.versions_helpers import prompt_graph, publish_url, save

pytestmark = pytest.mark.django_db(transaction=True)


def _publish_at_once(api: Api, user: Any, design: Any, revisions: list[int]) -> list[int]:
    tokens = [api.token_for(user) for _ in revisions]
    barrier = threading.Barrier(len(revisions))
    statuses: list[int] = []

    def post(token: str, revision: int) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        barrier.wait()
        try:
            response = client.post(publish_url(design), {"revision": revision}, format="json")
            statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=post, args=pair)
               for pair in zip(tokens, revisions, strict=True)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


def test_it_numbers_concurrent_publishes_without_gaps(api: Api, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    for i in range(3):
        save(alice, design, prompt_graph(f"Variant {i}: {{input}}"))
    statuses = _publish_at_once(api, alice, design, [1, 2, 3, 4])
    assert statuses == [201] * 4
    numbers = sorted(Version.objects.filter(design=design).values_list("number", flat=True))
    assert numbers == [1, 2, 3, 4]


def test_it_publishes_one_behaviour_once_under_concurrency(api: Api, alice: Any,
                                                           acme: Any) -> None:
    design = make_design(alice, acme)
    statuses = _publish_at_once(api, alice, design, [1, 1, 1])
    assert sorted(statuses) == [200, 200, 201]
    assert Version.objects.filter(design=design).count() == 1
