"""`require_evaluation` through the API: sent on create it is kept; project editors change
it with a PUT, alone (no new revision) or with a graph (the revision that graph makes);
each change is audited; viewers cannot change it and other tenants see nothing
(docs/decisions/require-evaluation-is-a-design-setting.md)."""

from __future__ import annotations

from typing import Any

from designs.models import Design, DesignRevision
from kionga.models import AuditEvent
from tests.conftest import Api
from tests.designs_helpers import assistant_graph, make_design
from tests.versions_helpers import publish_url

DESIGNS = "/api/v1/agent-designs"


def design_url(design: Design) -> str:
    return f"{DESIGNS}/{design.pk}"


def test_it_keeps_require_evaluation_sent_on_create(api: Api, carol: Any, acme: Any) -> None:
    client = api.client_for(carol)
    on = client.post(DESIGNS, {"project_id": acme.pk, "name": "Gated",
                               "require_evaluation": True}, format="json")
    assert on.status_code == 201, on.content
    assert on.json()["require_evaluation"] is True
    assert Design.objects.get(pk=on.json()["id"]).require_evaluation is True
    off = client.post(DESIGNS, {"project_id": acme.pk, "name": "Open"}, format="json")
    assert off.json()["require_evaluation"] is False
    bad = client.post(DESIGNS, {"project_id": acme.pk, "name": "Bad",
                                "require_evaluation": "yes"}, format="json")
    error = api.assert_error(bad, 400, "invalid_request")
    assert "require_evaluation" in error["details"]["fields"]


def test_an_editor_turns_it_on_and_off_without_a_new_revision(api: Api, alice: Any,
                                                                carol: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(carol)
    on = client.put(design_url(design), {"revision": 1, "require_evaluation": True},
                    format="json")
    assert on.status_code == 200, on.content
    assert (on.json()["require_evaluation"], on.json()["revision"]) == (True, 1)
    assert DesignRevision.objects.filter(design=design).count() == 1
    gated = client.post(publish_url(design), {"revision": 1}, format="json")
    api.assert_error(gated, 409, "quality_gate")
    off = client.put(design_url(design), {"revision": 1, "require_evaluation": False},
                     format="json")
    assert (off.json()["require_evaluation"], off.json()["revision"]) == (False, 1)
    assert client.post(publish_url(design), {"revision": 1}, format="json").status_code == 201
    same = client.put(design_url(design), {"revision": 1, "require_evaluation": False},
                      format="json")
    assert same.status_code == 200
    changes = list(AuditEvent.objects.filter(action="design.require_evaluation_changed")
                   .order_by("id").values_list("actor__username", "details"))
    assert changes == [("carol", {"require_evaluation": True, "by_staff": False, "revision": 1}),
                       ("carol", {"require_evaluation": False, "by_staff": False,
                                  "revision": 1})]


def test_it_changes_with_a_graph_in_the_revision_that_graph_makes(api: Api, alice: Any,
                                                                    acme: Any) -> None:
    design = make_design(alice, acme)
    saved = api.client_for(alice).put(design_url(design), {
        "revision": 1, "graph": assistant_graph(), "require_evaluation": True}, format="json")
    assert saved.status_code == 200, saved.content
    assert (saved.json()["require_evaluation"], saved.json()["revision"]) == (True, 2)
    audit = AuditEvent.objects.get(action="design.require_evaluation_changed")
    assert audit.details == {"require_evaluation": True, "by_staff": False, "revision": 2}


def test_a_change_without_a_graph_still_needs_the_current_revision(api: Api, alice: Any,
                                                                    acme: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    client.put(design_url(design), {"revision": 1, "graph": assistant_graph()}, format="json")
    stale = client.put(design_url(design), {"revision": 1, "require_evaluation": True},
                       format="json")
    error = api.assert_error(stale, 409, "stale_revision")
    assert error["details"] == {"current_revision": 2}
    nothing = client.put(design_url(design), {"revision": 2}, format="json")
    error = api.assert_error(nothing, 400, "invalid_request")
    assert "graph" in error["details"]["fields"]
    renamed = client.put(design_url(design), {"revision": 2, "name": "Renamed"}, format="json")
    assert (renamed.json()["name"], renamed.json()["revision"]) == ("Renamed", 2)
    design.refresh_from_db()
    assert design.require_evaluation is False
    assert not AuditEvent.objects.filter(action="design.require_evaluation_changed").exists()


def test_viewers_cannot_change_it_and_other_tenants_see_nothing(
        api: Api, alice: Any, bob: Any, mallory: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    body = {"revision": 1, "require_evaluation": True}
    api.assert_error(api.client_for(bob).put(design_url(design), body, format="json"), 403,
                     "forbidden")
    api.assert_error(api.client_for(mallory).put(design_url(design), body, format="json"), 404,
                     "not_found")
    design.refresh_from_db()
    assert design.require_evaluation is False
