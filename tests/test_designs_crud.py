"""Create, list and read designs; tenants never see each other's."""

from typing import Any

from designs.models import Design
from tests.conftest import Api
from tests.designs_helpers import assistant_graph, make_design

URL = "/api/v1/agent-designs"


def test_it_creates_a_design_with_its_first_revision(api: Api, carol: Any, acme: Any) -> None:
    body = {"project_id": acme.pk, "name": "Support", "graph": assistant_graph()}
    response = api.client_for(carol).post(URL, body, format="json")
    assert response.status_code == 201, response.content
    data = response.json()
    assert data["revision"] == 1 and data["name"] == "Support"
    assert data["validation"]["runnable"] is True
    assert len(data["validation"]["content_sha256"]) == 64
    assert Design.objects.get(pk=data["id"]).revisions.count() == 1


def test_it_starts_an_empty_design_when_no_graph_is_sent(api: Api, carol: Any, acme: Any) -> None:
    response = api.client_for(carol).post(URL, {"project_id": acme.pk, "name": "Blank"},
                                          format="json")
    assert response.status_code == 201
    assert [n["kind"] for n in response.json()["graph"]["nodes"]] == ["input", "output"]


def test_it_refuses_viewers(api: Api, bob: Any, acme: Any) -> None:
    response = api.client_for(bob).post(URL, {"project_id": acme.pk, "name": "X"}, format="json")
    api.assert_error(response, 403, "forbidden")


def test_it_hides_other_projects(api: Api, mallory: Any, acme: Any) -> None:
    response = api.client_for(mallory).post(URL, {"project_id": acme.pk, "name": "X"},
                                            format="json")
    api.assert_error(response, 404, "not_found")


def test_it_rejects_a_missing_name(api: Api, carol: Any, acme: Any) -> None:
    response = api.client_for(carol).post(URL, {"project_id": acme.pk}, format="json")
    error = api.assert_error(response, 400, "invalid_request")
    assert error["details"] == {"fields": {"name": ["This field is required."]}}


def test_it_keeps_the_name_as_sent_and_refuses_a_blank_one(api: Api, carol: Any,
                                                          acme: Any) -> None:
    client = api.client_for(carol)
    for name in ("   ", 7, "x" * 201):
        error = api.assert_error(client.post(URL, {"project_id": acme.pk, "name": name},
                                             format="json"), 400, "invalid_request")
        assert list(error["details"]["fields"]) == ["name"]
    created = client.post(URL, {"project_id": str(acme.pk), "name": " Support "}, format="json")
    assert created.json()["name"] == " Support "


def test_it_rejects_a_graph_that_is_not_a_document(api: Api, carol: Any, acme: Any) -> None:
    body = {"project_id": acme.pk, "name": "X", "graph": {"nodes": "nope"}}
    error = api.assert_error(api.client_for(carol).post(URL, body, format="json"), 400,
                             "invalid_document")
    assert error["details"]["issues"][0]["code"] == "invalid_document"


def test_it_saves_drafts_with_errors(api: Api, carol: Any, acme: Any) -> None:
    graph = assistant_graph()
    graph["nodes"][1]["config"] = {}
    body = {"project_id": acme.pk, "name": "Draft", "graph": graph}
    data = api.client_for(carol).post(URL, body, format="json").json()
    assert data["validation"]["runnable"] is False
    codes = {i["code"] for i in data["validation"]["issues"]}
    assert "missing_required_config" in codes


def test_it_lists_only_the_callers_designs(api: Api, alice: Any, mallory: Any, acme: Any,
                                           evil: Any) -> None:
    mine = make_design(alice, acme)
    make_design(mallory, evil, "Evil")
    listed = api.client_for(alice).get(URL).json()["designs"]
    assert [d["id"] for d in listed] == [str(mine.pk)]
    api.assert_error(api.client_for(alice).get(URL, {"project_id": evil.pk}), 404, "not_found")


def test_it_reads_one_design(api: Api, alice: Any, bob: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    data = api.client_for(bob).get(f"{URL}/{design.pk}").json()
    assert data["id"] == str(design.pk) and data["graph"]["schema_version"] == 2
    assert data["revisions"][0]["number"] == 1


def test_it_answers_404_for_another_tenant_or_a_bad_id(api: Api, alice: Any, mallory: Any,
                                                       acme: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(mallory)
    api.assert_error(client.get(f"{URL}/{design.pk}"), 404, "not_found")
    api.assert_error(client.get(f"{URL}/not-a-uuid"), 404, "not_found")
    api.assert_error(client.put(f"{URL}/{design.pk}", {"revision": 1, "graph": {}},
                                format="json"), 404, "not_found")
