"""POST /agent-designs/{id}/fixtures/suggest: proposals, saving the untaken names, roles."""

from __future__ import annotations

from typing import Any

from contracts.suggest import MAX_SUGGESTIONS
from designs.actions import do_save_revision
from evaluations.models import Fixtures
from tests.conftest import Api
from tests.fixtures_helpers import case, fixtures_url, make_triage, suggest_url


def test_it_proposes_one_case_per_path(api: Api, alice: Any, bob: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    response = api.client_for(bob).post(suggest_url(design), {}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["saved"] == []
    refund, general = body["suggestions"]
    assert refund["expected"]["calls"] == ["input", "is-refund", "refund-prompt", "model",
                                           "output"]
    assert "refund" in refund["input"].lower() and "refund" not in general["input"].lower()
    assert {refund["phrased"], general["phrased"]} == {"conditions"}
    assert not Fixtures.objects.filter(design=design).exists()


def test_save_stores_the_untaken_names(api: Api, alice: Any, carol: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    client = api.client_for(carol)
    names = [s["name"] for s in client.post(suggest_url(design), {}, format="json")
             .json()["suggestions"]]
    client.put(fixtures_url(design), {"revision": 0, "cases": [case(names[0])]}, format="json")
    response = client.post(suggest_url(design), {"save": True, "revision": 1}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert [c["name"] for c in body["saved"]] == names[1:]
    assert body["revision"] == 2
    stored = client.get(fixtures_url(design)).json()
    assert [c["name"] for c in stored["cases"]] == names
    assert stored["cases"][1]["id"] == body["saved"][0]["id"]
    assert stored["cases"][1]["expected"]["calls"][0] == "input"
    # Saved suggestions are ordinary cases: a PUT sends them back unchanged.
    again = client.put(fixtures_url(design), {"revision": 2, "cases": stored["cases"]},
                       format="json")
    assert again.status_code == 200, again.content


def test_save_with_a_stale_revision_is_409(api: Api, alice: Any, carol: Any,
                                           acme: Any) -> None:
    design = make_triage(alice, acme)
    client = api.client_for(carol)
    client.put(fixtures_url(design), {"revision": 0, "cases": [case()]}, format="json")
    stale = client.post(suggest_url(design), {"save": True, "revision": 0}, format="json")
    api.assert_error(stale, 409, "stale_revision")
    missing = client.post(suggest_url(design), {"save": True}, format="json")
    error = api.assert_error(missing, 400, "invalid_request")
    assert "revision" in error["details"]["fields"]
    assert Fixtures.objects.get(design=design).revision == 1


def test_a_viewer_cannot_save(api: Api, alice: Any, bob: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    response = api.client_for(bob).post(suggest_url(design), {"save": True, "revision": 0},
                                        format="json")
    api.assert_error(response, 403, "forbidden")
    assert not Fixtures.objects.filter(design=design).exists()


def test_a_bad_body_is_a_field_error(api: Api, alice: Any, carol: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    response = api.client_for(carol).post(suggest_url(design), {"save": "yes"}, format="json")
    error = api.assert_error(response, 400, "invalid_request")
    assert "save" in error["details"]["fields"]


def test_it_suggests_for_the_latest_saved_revision(api: Api, alice: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    graph = {"schema_version": 2, "nodes": [
        {"id": "input", "kind": "input"},
        {"id": "r", "kind": "router", "config": {"route_1": "contains:a", "route_2": "equals:b"}},
        {"id": "output", "kind": "output"}], "edges": [
        {"from": "input", "to": "r"},
        {"from": "r", "to": "output", "from_port": "route_1"},
        {"from": "r", "to": "output", "from_port": "route_2"},
        {"from": "r", "to": "output", "from_port": "default"}]}
    do_save_revision(alice, design, 1, graph, None, None)
    body = api.client_for(alice).post(suggest_url(design), {}, format="json").json()
    assert [s["input"] for s in body["suggestions"]][:2] == ["a", "b"]
    assert len(body["suggestions"]) == 3 <= MAX_SUGGESTIONS


def test_an_unnormalizable_draft_gets_no_suggestions(api: Api, alice: Any, acme: Any) -> None:
    design = make_triage(alice, acme)
    do_save_revision(alice, design, 1, {"nodes": [], "edges": []}, None, None)
    body = api.client_for(alice).post(suggest_url(design), {}, format="json").json()
    assert body == {"suggestions": [], "saved": []}
