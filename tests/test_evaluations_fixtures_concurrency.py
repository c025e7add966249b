"""Concurrent PUTs of one fixtures revision on PostgreSQL: exactly one wins."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import connection
from rest_framework.test import APIClient

from evaluations.models import Fixtures
from tests.conftest import Api
from tests.fixtures_helpers import case, fixtures_url, make_triage

pytestmark = pytest.mark.django_db(transaction=True)


def _put_at_once(api: Api, user: Any, url: str, revision: int, count: int) -> list[int]:
    tokens = [api.token_for(user) for _ in range(count)]
    barrier = threading.Barrier(count)
    statuses: list[int] = []

    def put(index: int) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {tokens[index]}")
        barrier.wait()
        try:
            body = {"revision": revision, "cases": [case(f"Writer {index}")]}
            statuses.append(client.put(url, body, format="json").status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=put, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return statuses


@pytest.mark.parametrize("revision", [0, 1])  # the first PUT inserts, later ones update
def test_exactly_one_of_concurrent_puts_wins(api: Api, alice: Any, carol: Any, acme: Any,
                                             revision: int) -> None:
    design = make_triage(alice, acme)
    if revision:
        Fixtures.objects.create(design=design, revision=1, cases=[])
    statuses = _put_at_once(api, carol, fixtures_url(design), revision, 4)
    assert sorted(statuses) == [200, 409, 409, 409]
    stored = Fixtures.objects.get(design=design)
    assert stored.revision == revision + 1
    assert len(stored.cases) == 1
