"""GET/PUT /agent-designs/{id}/fixtures: revisions, roles, tenants, stored case shape."""

from __future__ import annotations

from typing import Any

from tests.conftest import Api
from tests.fixtures_helpers import case, fixtures_url, make_triage


def test_a_design_without_cases_has_revision_0(api: Api, alice: Any, bob: Any,
                                               acme: Any) -> None:
    design = make_triage(alice, acme)
    response = api.client_for(bob).get(fixtures_url(design))
    assert response.status_code == 200
    assert response.json() == {"design_id": str(design.pk), "revision": 0, "cases": [],
                               "updated_at": None}


def test_a_put_stores_cases_with_ids_and_defaults(api: Api, alice: Any, carol: Any,
                                                  acme: Any) -> None:
    design = make_triage(alice, acme)
    judged = case("Judged", tags=["refunds"], history=[{"role": "user", "content": "hi"}],
                  expected={"calls": ["is-refund", "refund-prompt"],
                            "judge": {"criteria": ["relevance", "safety"]}})
    response = api.client_for(carol).put(fixtures_url(design), {
        "revision": 0, "cases": [judged, case("Own id", id="my-case")]}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["revision"] == 1
    first, second = body["cases"]
    assert first["id"].startswith("case-") and second["id"] == "my-case"
    assert first["expected"] == {"calls": ["is-refund", "refund-prompt"],
                                 "judge": {"criteria": ["relevance", "safety"],
                                           "reference": None, "min_score": 0.7}}
    assert first["history"] == [{"role": "user", "content": "hi"}]
    assert first["tags"] == ["refunds"]
    assert second["expected"] == {"calls": []}
    # IDs are stable: sending the cases back keeps them.
    again = api.client_for(carol).put(fixtures_url(design), {
        "revision": 1, "cases": body["cases"]}, format="json")
    assert again.status_code == 200, again.content
    assert [c["id"] for c in again.json()["cases"]] == [first["id"], "my-case"]
    assert again.json()["revision"] == 2


def test_a_stale_put_is_409(api: Api, alice: Any, carol: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    client = api.client_for(carol)
    assert client.put(fixtures_url(design), {"revision": 0, "cases": [case()]},
                      format="json").status_code == 200
    stale = client.put(fixtures_url(design), {"revision": 0, "cases": []}, format="json")
    error = api.assert_error(stale, 409, "stale_revision")
    assert error["details"] == {"current_revision": 1}
    ahead = client.put(fixtures_url(design), {"revision": 5, "cases": []}, format="json")
    api.assert_error(ahead, 409, "stale_revision")
    assert len(client.get(fixtures_url(design)).json()["cases"]) == 1


def test_a_viewer_reads_but_cannot_put(api: Api, alice: Any, bob: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    client = api.client_for(bob)
    assert client.get(fixtures_url(design)).status_code == 200
    api.assert_error(client.put(fixtures_url(design), {"revision": 0, "cases": []},
                                format="json"), 403, "forbidden")


def test_another_tenant_gets_404(api: Api, alice: Any, acme: Any, mallory: Any) -> None:
    design = make_triage(alice, acme)
    client = api.client_for(mallory)
    api.assert_error(client.get(fixtures_url(design)), 404, "not_found")
    api.assert_error(client.put(fixtures_url(design), {"revision": 0, "cases": []},
                                format="json"), 404, "not_found")
    api.assert_error(client.post(fixtures_url(design) + "/suggest", {}, format="json"),
                     404, "not_found")
