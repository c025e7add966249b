"""GET versions of a design, one artifact, and the flow picker; other tenants get 404."""

from typing import Any

from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.versions_helpers import prompt_graph, publish, published, save


def test_it_lists_a_designs_versions_newest_first(api: Api, alice: Any, bob: Any,
                                                  acme: Any) -> None:
    design = make_design(alice, acme)
    publish(alice, design, notes="one")
    save(alice, design, prompt_graph())
    publish(alice, design, notes="two")
    data = api.client_for(bob).get(f"/api/v1/agent-designs/{design.pk}/versions").json()
    assert [(v["number"], v["notes"]) for v in data["versions"]] == [(2, "two"), (1, "one")]
    assert all(v["deployments"] == [] for v in data["versions"])


def test_it_serves_the_artifact(api: Api, alice: Any, bob: Any, acme: Any) -> None:
    version = publish(alice, make_design(alice, acme))
    response = api.client_for(bob).get(f"/api/v1/agent-versions/{version.pk}")
    assert response.status_code == 200
    assert response.json() == version.artifact


def test_it_lists_versions_for_pickers_without_graphs(api: Api, alice: Any, mallory: Any,
                                                      acme: Any, evil: Any) -> None:
    mine = published(alice, acme, prompt_graph(), "Mine")
    published(mallory, evil, prompt_graph(), "Theirs")
    client = api.client_for(alice)
    listed = client.get("/api/v1/agent-versions").json()["versions"]
    assert [v["id"] for v in listed] == [str(mine.pk)]
    assert set(listed[0]) == {"id", "design_id", "project_id", "number", "content_sha256",
                              "source_revision", "notes", "author", "created_at"}
    by_project = client.get(f"/api/v1/agent-versions?project_id={acme.pk}").json()
    assert [v["id"] for v in by_project["versions"]] == [str(mine.pk)]
    api.assert_error(client.get(f"/api/v1/agent-versions?project_id={evil.pk}"), 404,
                     "not_found")


def test_it_hides_another_projects_versions(api: Api, alice: Any, mallory: Any,
                                            acme: Any) -> None:
    design = make_design(alice, acme)
    version = publish(alice, design)
    client = api.client_for(mallory)
    for url in (f"/api/v1/agent-versions/{version.pk}",
                f"/api/v1/agent-designs/{design.pk}/versions",
                "/api/v1/agent-versions/not-a-uuid"):
        api.assert_error(client.get(url), 404, "not_found")


def test_it_cannot_change_a_version(api: Api, alice: Any, acme: Any) -> None:
    version = publish(alice, make_design(alice, acme))
    client = api.client_for(alice)
    for method in (client.put, client.patch, client.delete):
        response = method(f"/api/v1/agent-versions/{version.pk}", {"notes": "x"}, format="json")
        api.assert_error(response, 405, "method_not_allowed")
    version.refresh_from_db()
    assert version.notes == ""
