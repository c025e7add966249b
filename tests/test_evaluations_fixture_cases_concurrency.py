"""Concurrent POSTs of one case each on PostgreSQL: every case lands, each in its own
fixtures revision (the row's lock serializes them; two first cases race on the INSERT
and the loser applies its change again on the row the winner made)."""

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


@pytest.mark.parametrize("existing", [False, True])  # no row yet: the adds race to insert it
def test_concurrent_adds_all_land(api: Api, alice: Any, carol: Any, acme: Any,
                                  existing: bool) -> None:
    design = make_triage(alice, acme)
    if existing:
        Fixtures.objects.create(design=design, revision=1, cases=[])
    count = 4
    tokens = [api.token_for(carol) for _ in range(count)]
    barrier = threading.Barrier(count)
    answers: list[tuple[int, Any]] = []

    def add(index: int) -> None:
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {tokens[index]}")
        barrier.wait()
        try:
            response = client.post(fixtures_url(design) + "/cases", case(f"Writer {index}"),
                                   format="json")
            answers.append((response.status_code, response.json().get("revision")))
        finally:
            connection.close()

    threads = [threading.Thread(target=add, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    first = 2 if existing else 1
    assert sorted(answers) == [(201, first + i) for i in range(count)]
    stored = Fixtures.objects.get(design=design)
    assert stored.revision == first + count - 1
    assert sorted(c["name"] for c in stored.cases) == [f"Writer {i}" for i in range(count)]
