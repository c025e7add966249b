"""POST /agent-designs/{id}/publish: new behaviour is a new version, the same behaviour is not."""

from typing import Any

from designs.models import Version
from kionga.models import AuditEvent
from tests.conftest import Api
from tests.designs_helpers import assistant_graph, make_design
from tests.versions_helpers import publish_url, save


def test_it_publishes_201_then_answers_200_with_the_same_version(api: Api, carol: Any,
                                                                alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(carol)
    first = client.post(publish_url(design), {"revision": 1, "notes": "First"}, format="json")
    assert first.status_code == 201, first.content
    again = client.post(publish_url(design), {"revision": 1}, format="json")
    assert again.status_code == 200, again.content
    assert (first.json()["created"], again.json()["created"]) == (True, False)
    assert "message" not in first.json() and "Nothing new" in again.json()["message"]
    summary = {k: v for k, v in again.json().items() if k not in ("created", "message")}
    assert summary == {k: v for k, v in first.json().items() if k != "created"}
    data = first.json()
    assert data["number"] == 1 and data["notes"] == "First" and data["author"] == "carol"
    assert data["source_revision"] == 1 and data["design_id"] == str(design.pk)
    assert Version.objects.count() == 1


def test_it_publishes_nothing_new_for_a_cosmetic_edit(api: Api, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    first = client.post(publish_url(design), {"revision": 1}, format="json").json()
    graph = assistant_graph()
    graph["name"] = "Renamed graph"
    for i, node in enumerate(reversed(graph["nodes"])):
        node["name"], node["x"], node["y"], node["group"] = f"N{i}", 7 * i, 3 * i, "G"
    graph["nodes"].reverse()
    save(alice, design, graph)
    second = client.post(publish_url(design), {"revision": 2}, format="json")
    assert second.status_code == 200 and second.json()["id"] == first["id"]


def test_it_makes_version_2_for_a_behaviour_change(api: Api, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    first = client.post(publish_url(design), {"revision": 1}, format="json").json()
    graph = assistant_graph()
    graph["nodes"][1]["config"]["template"] = "Answer in French: {input}"
    save(alice, design, graph)
    second = client.post(publish_url(design), {"revision": 2}, format="json")
    assert second.status_code == 201
    assert second.json()["number"] == 2
    assert second.json()["content_sha256"] != first["content_sha256"]
    # Republishing the older revision finds version 1 again.
    older = client.post(publish_url(design), {"revision": 1}, format="json")
    assert older.status_code == 200 and older.json()["number"] == 1


def test_it_refuses_a_revision_with_validation_errors(api: Api, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    graph = assistant_graph()
    graph["nodes"][1]["config"] = {}
    save(alice, design, graph)
    response = api.client_for(alice).post(publish_url(design), {"revision": 2}, format="json")
    error = api.assert_error(response, 422, "validation_failed")
    assert "missing_required_config" in {i["code"] for i in error["details"]["issues"]}
    assert Version.objects.count() == 0


def test_it_answers_404_for_a_missing_revision(api: Api, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    response = api.client_for(alice).post(publish_url(design), {"revision": 9}, format="json")
    api.assert_error(response, 404, "not_found")


def test_it_names_the_bad_fields(api: Api, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    for body, field in (({}, "revision"), ({"revision": 0}, "revision"),
                        ({"revision": "one"}, "revision"),
                        ({"revision": 1, "notes": "x" * 10_001}, "notes"),
                        ({"revision": 1, "notes": ["a"]}, "notes")):
        error = api.assert_error(client.post(publish_url(design), body, format="json"), 400,
                                 "invalid_request")
        assert field in error["details"]["fields"], (body, error)
    api.assert_error(client.post(publish_url(design), [1], format="json"), 400,
                     "invalid_request")


def test_it_lets_viewers_read_but_not_publish(api: Api, alice: Any, bob: Any,
                                              acme: Any) -> None:
    design = make_design(alice, acme)
    api.assert_error(api.client_for(bob).post(publish_url(design), {"revision": 1},
                                              format="json"), 403, "forbidden")
    assert api.client_for(bob).get(f"/api/v1/agent-designs/{design.pk}/versions").status_code \
        == 200


def test_it_hides_another_projects_design(api: Api, alice: Any, mallory: Any,
                                          acme: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(mallory)
    api.assert_error(client.post(publish_url(design), {"revision": 1}, format="json"), 404,
                     "not_found")
    api.assert_error(client.post("/api/v1/agent-designs/not-a-uuid/publish", {"revision": 1},
                                 format="json"), 404, "not_found")


def test_it_audits_the_publish(api: Api, carol: Any, alice: Any, acme: Any) -> None:
    design = make_design(alice, acme)
    data = api.client_for(carol).post(publish_url(design), {"revision": 1}, format="json").json()
    api.client_for(carol).post(publish_url(design), {"revision": 1}, format="json")
    events = list(AuditEvent.objects.filter(action="version.published"))
    assert len(events) == 1  # the 200 published nothing
    event = events[0]
    assert event.actor == carol and event.project == acme and event.target_id == data["id"]
    assert event.details == {"design_id": str(design.pk), "version": 1,
                             "content_sha256": data["content_sha256"]}
