"""PUT sends the revision it read: stale revisions get 409 and two PUTs cannot both win."""

import threading
from typing import Any

import pytest
from django.db import connection

from designs.models import Design
from tests.conftest import Api
from tests.designs_helpers import assistant_graph, make_design

URL = "/api/v1/agent-designs"


def test_it_stores_the_next_revision(api: Api, alice: Any, carol: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    graph = assistant_graph()
    graph["nodes"][1]["config"]["template"] = "New: {input}"
    response = api.client_for(carol).put(
        f"{URL}/{design.pk}", {"revision": 1, "graph": graph, "name": "Renamed"}, format="json"
    )
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["revision"] == 2 and data["name"] == "Renamed"
    assert data["graph"]["nodes"][1]["config"]["template"] == "New: {input}"
    assert design.revisions.get(number=1).graph["nodes"][1]["config"]["template"] != "New: {input}"


def test_it_refuses_a_stale_revision(api: Api, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    body = {"revision": 1, "graph": assistant_graph()}
    assert client.put(f"{URL}/{design.pk}", body, format="json").status_code == 200
    error = api.assert_error(client.put(f"{URL}/{design.pk}", body, format="json"), 409,
                             "stale_revision")
    assert error["details"]["current_revision"] == 2
    assert Design.objects.get(pk=design.pk).revisions.count() == 2


def test_it_needs_the_revision(api: Api, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    for revision in (None, "1", 1.5, True):
        body = {"graph": assistant_graph()} | ({} if revision is None else {"revision": revision})
        error = api.assert_error(client.put(f"{URL}/{design.pk}", body, format="json"), 400,
                                 "invalid_request")
        assert list(error["details"]["fields"]) == ["revision"]


def test_it_refuses_viewers(api: Api, alice: Any, bob: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    response = api.client_for(bob).put(f"{URL}/{design.pk}",
                                       {"revision": 1, "graph": assistant_graph()}, format="json")
    api.assert_error(response, 403, "forbidden")


@pytest.mark.django_db(transaction=True)
def test_it_lets_only_one_of_two_concurrent_puts_win(api: Api, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    tokens = [api.token_for(alice), api.token_for(alice)]
    barrier = threading.Barrier(2)
    statuses: list[int] = []

    def put(token: str, template: str) -> None:
        from rest_framework.test import APIClient

        graph = assistant_graph()
        graph["nodes"][1]["config"]["template"] = template
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        barrier.wait()
        try:
            response = client.put(f"{URL}/{design.pk}", {"revision": 1, "graph": graph},
                                  format="json")
            statuses.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=put, args=(t, f"T{i} {{input}}"))
               for i, t in enumerate(tokens)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [200, 409]
    design.refresh_from_db()
    assert design.revision == 2 and design.revisions.count() == 2
