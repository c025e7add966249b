"""The validate endpoints: unsaved graphs, saved revisions, canvases, and bad bodies."""

from typing import Any

from kionga.resource_models import KnowledgeBase
from tests.conftest import Api
from tests.designs_helpers import assistant_graph, make_design

UNSAVED = "/api/v1/agent-designs/validate"


def _knowledge_graph(kb: str) -> dict[str, Any]:
    return {
        "schema_version": 2,
        "nodes": [
            {"id": "input", "kind": "input"},
            {"id": "kb", "kind": "knowledge", "config": {"knowledge_base": kb}},
            {"id": "output", "kind": "output"},
        ],
        "edges": [{"from": "input", "to": "kb"}, {"from": "kb", "to": "output"}],
    }


def test_it_reports_every_issue_of_an_unsaved_graph(api: Api, bob: Any, acme: Any) -> None:
    graph = assistant_graph()
    graph["nodes"][1]["config"] = {"template": "x", "colour": "red"}
    graph["settings"]["max_steps"] = 500
    body = {"project_id": acme.pk, **graph}
    data = api.client_for(bob).post(UNSAVED, body, format="json").json()
    assert data["runnable"] is False
    found = {(i["code"], i.get("path")) for i in data["issues"]}
    assert ("unknown_config_key", "nodes.1.config.colour") in found
    assert ("invalid_setting", "settings.max_steps") in found
    assert data["graph"]["schema_version"] == 2 and len(data["content_sha256"]) == 64


def test_it_answers_400_for_a_body_that_is_not_a_graph(api: Api, bob: Any) -> None:
    client = api.client_for(bob)
    body: Any
    for body in ([1, 2], {"nodes": []}, {"nodes": {}, "edges": []}, "text"):
        error = api.assert_error(client.post(UNSAVED, body, format="json"), 400,
                                 "invalid_document")
        assert error["details"]["issues"], body
    # Not JSON at all is no graph document either: the same issue shape (issue 7.6).
    raw = client.post(UNSAVED, data="{not json", content_type="application/json")
    assert api.assert_error(raw, 400, "invalid_document")["details"]["issues"]


def test_it_checks_resources_in_the_callers_project(api: Api, alice: Any, acme: Any,
                                                    evil: Any) -> None:
    KnowledgeBase.objects.create(project=acme, key="handbook")
    KnowledgeBase.objects.create(project=evil, key="secrets")
    client = api.client_for(alice)
    ok = client.post(UNSAVED, {"project_id": acme.pk, **_knowledge_graph("handbook")},
                     format="json").json()
    assert ok["runnable"], ok["issues"]
    other = client.post(UNSAVED, {"project_id": acme.pk, **_knowledge_graph("secrets")},
                        format="json").json()
    missing = client.post(UNSAVED, {"project_id": acme.pk, **_knowledge_graph("nothing")},
                          format="json").json()
    [other_issue] = [i for i in other["issues"] if i["code"] == "unknown_resource"]
    [missing_issue] = [i for i in missing["issues"] if i["code"] == "unknown_resource"]
    assert other_issue["path"] == "nodes.1.config.knowledge_base"
    # The same words either way, so nothing tells that "secrets" exists elsewhere.
    assert other_issue["message"].replace("secrets", "X") == missing_issue["message"].replace(
        "nothing", "X")


def test_it_hides_another_project(api: Api, mallory: Any, acme: Any) -> None:
    response = api.client_for(mallory).post(UNSAVED, {"project_id": acme.pk, "nodes": [],
                                                      "edges": []}, format="json")
    api.assert_error(response, 404, "not_found")


def test_it_validates_the_saved_revision(api: Api, alice: Any, bob: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    data = api.client_for(bob).post(f"/api/v1/agent-designs/{design.pk}/validate").json()
    assert data["runnable"] is True
    assert data["content_sha256"] == api.client_for(bob).get(
        f"/api/v1/agent-designs/{design.pk}").json()["validation"]["content_sha256"]


def test_it_validates_the_canvas_in_the_body(api: Api, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    canvas = assistant_graph()
    canvas["edges"].append({"from": "output", "to": "input"})
    data = api.client_for(alice).post(f"/api/v1/agent-designs/{design.pk}/validate", canvas,
                                      format="json").json()
    assert data["runnable"] is False
    assert "unknown_port" in {i["code"] for i in data["issues"]}


def test_it_hides_another_tenants_design(api: Api, alice: Any, mallory: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    response = api.client_for(mallory).post(f"/api/v1/agent-designs/{design.pk}/validate")
    api.assert_error(response, 404, "not_found")
