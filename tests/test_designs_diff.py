"""GET /agent-designs/{id}/diff?from=&to= between revisions and versions, and restoring
an old revision as the next one (audited); the design's tenancy and roles."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kionga.models import AuditEvent
from tests.conftest import Api
from tests.designs_helpers import assistant_graph, make_design
from tests.versions_helpers import publish, save

pytestmark = pytest.mark.django_db


def url(design: Any, query: str = "") -> str:
    return f"/api/v1/agent-designs/{design.pk}/diff{query}"


def edited(template: str | None = None, name: str | None = None) -> dict[str, Any]:
    graph = copy.deepcopy(assistant_graph())
    prompt = next(n for n in graph["nodes"] if n["id"] == "prompt")
    if template is not None:
        prompt["config"]["template"] = template
    if name is not None:
        prompt["name"] = name
    return graph


def test_it_compares_revisions_and_versions(api: Api, alice: Any, bob: Any,
                                            acme: Any) -> None:
    design = make_design(alice, acme)
    publish(alice, design)
    save(alice, design, edited(name="Renamed"))  # revision 2: cosmetic
    save(alice, design, edited("Tell me: {input}", "Renamed"))  # revision 3
    viewer = api.client_for(bob)
    cosmetic = viewer.get(url(design, "?from=1&to=2"))
    assert cosmetic.status_code == 200, cosmetic.content
    body = cosmetic.json()
    assert body["behaviour_changed"] is False
    assert body["nodes"]["changed"][0]["changes"][0]["cosmetic"] is True
    real = viewer.get(url(design, "?from=v1&to=3")).json()
    assert real["behaviour_changed"] is True and real["from"] == "v1"
    [change] = [c for n in real["nodes"]["changed"] for c in n["changes"] if not c["cosmetic"]]
    assert change["field"] == "config.template" and change["after"] == "Tell me: {input}"


def test_it_refuses_bad_or_missing_sides_and_other_projects(api: Api, alice: Any,
                                                            mallory: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    api.assert_error(client.get(url(design, "?from=1")), 400, "invalid_request")
    api.assert_error(client.get(url(design, "?from=x&to=1")), 400, "invalid_request")
    api.assert_error(client.get(url(design, "?from=1&to=9")), 404, "not_found")
    api.assert_error(client.get(url(design, "?from=v3&to=1")), 404, "not_found")
    api.assert_error(api.client_for(mallory).get(url(design, "?from=1&to=1")), 404,
                     "not_found")


def test_it_restores_a_revision_as_the_next_one(api: Api, alice: Any, bob: Any,
                                                mallory: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    save(alice, design, edited("Tell me: {input}"))
    restore = f"/api/v1/agent-designs/{design.pk}/revisions/1/restore"
    api.assert_error(api.client_for(bob).post(restore, {"revision": 2}, format="json"), 403,
                     "forbidden")
    api.assert_error(api.client_for(mallory).post(restore, {"revision": 2}, format="json"),
                     404, "not_found")
    client = api.client_for(alice)
    api.assert_error(client.post(restore, {"revision": 1}, format="json"), 409,
                     "stale_revision")
    done = client.post(restore, {"revision": 2}, format="json")
    assert done.status_code == 200, done.content
    assert done.json()["revision"] == 3
    same = client.get(url(design, "?from=1&to=3")).json()
    assert same["behaviour_changed"] is False and same["nodes"]["changed"] == []
    event = AuditEvent.objects.get(action="design.revision_restored")
    assert event.details == {"restored": 1, "revision": 3}
    api.assert_error(client.post(f"/api/v1/agent-designs/{design.pk}/revisions/7/restore",
                                 {"revision": 3}, format="json"), 404, "not_found")
