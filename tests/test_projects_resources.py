"""Resources through the API: every member lists them for pickers, project admins create,
change and delete them per kind; URLs pass the egress policy; a resource a published
version uses cannot be deleted; a draft naming a deleted one says unknown_resource."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from contracts.registry import registry_document
from kionga.builtin_tools import BUILTIN_TOOLS
from kionga.models import AuditEvent, Project
from kionga.projects.resources import KIND_NAMES
from kionga.resource_models import ApiConnection, ModelEndpoint
from tests.conftest import Api
from tests.projects_helpers import resources_url
from tests.versions_helpers import linear, published

BODIES: dict[str, dict[str, Any]] = {
    "model": {"id": "gpt", "name": "GPT", "base_url": "https://llm.example.com/v1",
              "model_name": "gpt-x", "secret": "sk-1", "price_prompt_per_1k": 0.5,
              "price_completion_per_1k": 1.25},
    "function": {"id": "notify", "url": "https://hooks.example.com/n", "secret": "s"},
    "connection": {"id": "crm", "base_url": "https://crm.example.com/api",
                   "allowed_methods": ["GET"], "allowed_paths": ["/orders"],
                   "secret_headers": {"Authorization": "Bearer x"}},
    "knowledge_base": {"id": "faq", "name": "FAQ", "description": "Answers"},
    "dataset": {"id": "prices", "description": "Price list"},
}


def create_all(api: Api, admin: User, project: Project) -> None:
    client = api.client_for(admin)
    for kind, body in BODIES.items():
        answer = client.post(resources_url(project, kind), body, format="json")
        assert answer.status_code == 201, answer.content


def test_kinds_are_the_registrys_resource_kinds() -> None:
    # What the canvas's config forms ask for (setting.resource) is what ?kind= takes;
    # "version" pickers use GET /api/v1/agent-versions?project_id=. No setting names an
    # mcp_server: its tools are functions (mcp:<server>/<tool>).
    wanted = {setting["resource"] for component in registry_document()["components"]
              for setting in component["settings"] if setting.get("resource")}
    assert wanted == {*KIND_NAMES, "version"} - {"mcp_server"}


def test_admins_create_each_kind_and_members_list_them(
        api: Api, acme: Project, alice: User, bob: User) -> None:
    create_all(api, alice, acme)
    listed = api.client_for(bob).get(resources_url(acme))
    assert listed.status_code == 200, listed.content
    by_id = {r["id"]: r for r in listed.json()["resources"]}
    assert by_id["gpt"]["prices"] == {"prompt_per_1k": 0.5, "completion_per_1k": 1.25}
    assert by_id["gpt"]["secret_set"] is True and "secret" not in by_id["gpt"]
    assert by_id["crm"]["secret_header_names"] == ["Authorization"]
    assert by_id["crm"]["allowed_paths"] == ["/orders"]
    assert by_id["faq"] == {"id": "faq", "kind": "knowledge_base", "name": "FAQ",
                            "description": "Answers", "document_count": 0,
                            "created_at": by_id["faq"]["created_at"]}
    assert set(BUILTIN_TOOLS) <= set(by_id) and by_id["word_count"]["builtin"] is True
    only = api.client_for(bob).get(resources_url(acme) + "?kind=model").json()["resources"]
    assert [r["id"] for r in only] == ["gpt"]
    api.assert_error(api.client_for(bob).get(resources_url(acme) + "?kind=version"), 400,
                     "invalid_request")
    actions = AuditEvent.objects.filter(action="resource.created", actor=alice)
    assert sorted(actions.values_list("target_type", flat=True)) == sorted(BODIES)


def test_viewers_and_editors_cannot_change_resources(
        api: Api, acme: Project, alice: User, bob: User, carol: User) -> None:
    create_all(api, alice, acme)
    for person in (bob, carol):
        client = api.client_for(person)
        api.assert_error(client.post(resources_url(acme, "dataset"), {"id": "x"},
                                     format="json"), 403, "forbidden")
        api.assert_error(client.patch(resources_url(acme, "model") + "/gpt", {"name": "y"},
                                      format="json"), 403, "forbidden")
        api.assert_error(client.delete(resources_url(acme, "dataset") + "/prices"), 403,
                         "forbidden")
        assert client.get(resources_url(acme, "model") + "/gpt").status_code == 200


def test_another_projects_resources_are_404(api: Api, acme: Project, alice: User,
                                            mallory: User) -> None:
    create_all(api, alice, acme)
    thief = api.client_for(mallory)
    api.assert_error(thief.get(resources_url(acme)), 404, "not_found")
    api.assert_error(thief.get(resources_url(acme, "model") + "/gpt"), 404, "not_found")
    api.assert_error(thief.post(resources_url(acme, "dataset"), {"id": "x"}, format="json"),
                     404, "not_found")
    evil = mallory.kionga_memberships.get().project
    api.assert_error(thief.get(resources_url(evil, "model") + "/gpt"), 404, "not_found")


def test_secrets_are_write_only(api: Api, acme: Project, alice: User) -> None:
    create_all(api, alice, acme)
    client = api.client_for(alice)
    url = resources_url(acme, "model") + "/gpt"
    kept = client.patch(url, {"name": "GPT 2", "price_prompt_per_1k": 0.1234567},
                        format="json")
    assert kept.status_code == 200 and kept.json()["secret_set"] is True
    assert kept.json()["prices"]["prompt_per_1k"] == 0.123457
    assert ModelEndpoint.objects.get(key="gpt").secret == "sk-1"
    assert client.patch(url, {"secret": ""}, format="json").json()["secret_set"] is False
    crm = resources_url(acme, "connection") + "/crm"
    replaced = client.patch(crm, {"secret_headers": {"X-Key": "k"}}, format="json")
    assert replaced.json()["secret_header_names"] == ["X-Key"]
    assert ApiConnection.objects.get(key="crm").secret_headers == {"X-Key": "k"}
    api.assert_error(client.patch(url, {"id": "other"}, format="json"), 400, "invalid_request")
    changed = AuditEvent.objects.filter(action="resource.changed", target_id="gpt")
    assert [e.details for e in changed.order_by("id")] == [
        {"fields": ["name", "price_prompt_per_1k"]}, {"fields": ["secret"]}]


@pytest.mark.parametrize("url", [
    "http://10.0.0.5/v1", "http://169.254.169.254/latest", "http://localhost:8087/",
    "http://[::1]/", "ftp://llm.example.com/", "https://user:pw@llm.example.com/"])
def test_urls_pass_the_egress_policy(api: Api, acme: Project, alice: User, url: str) -> None:
    with override_settings(KIONGA_EGRESS_ALLOW=[]):
        body = {**BODIES["model"], "base_url": url}
        error = api.assert_error(api.client_for(alice).post(
            resources_url(acme, "model"), body, format="json"), 400, "invalid_request")
    assert list(error["details"]["fields"]) == ["base_url"]
    assert not ModelEndpoint.objects.exists()


def test_ids_are_unique_per_kind(api: Api, acme: Project, alice: User) -> None:
    create_all(api, alice, acme)
    client = api.client_for(alice)
    api.assert_error(client.post(resources_url(acme, "dataset"), {"id": "prices"},
                                 format="json"), 409, "resource_exists")
    api.assert_error(client.post(resources_url(acme, "function"),
                                 {**BODIES["function"], "id": "word_count"}, format="json"),
                     409, "resource_exists")
    api.assert_error(client.post(resources_url(acme, "dataset"), {"id": "a b"}, format="json"),
                     400, "invalid_request")


def test_documents_and_objects(api: Api, acme: Project, alice: User, bob: User) -> None:
    create_all(api, alice, acme)
    client = api.client_for(alice)
    docs = resources_url(acme, "knowledge_base") + "/faq/documents"
    added = client.post(docs, {"title": "Refunds", "text": "Refunds take 14 days."},
                        format="json")
    assert added.status_code == 201, added.content
    api.assert_error(api.client_for(bob).post(docs, {"text": "x"}, format="json"), 403,
                     "forbidden")
    assert [d["title"] for d in api.client_for(bob).get(docs).json()["documents"]] == ["Refunds"]
    assert client.delete(f"{docs}/{added.json()['id']}").status_code == 204
    api.assert_error(client.delete(f"{docs}/{added.json()['id']}"), 404, "not_found")
    objects = resources_url(acme, "dataset") + "/prices/objects"
    assert client.put(objects, {"key": "a/b", "value": {"eur": 3}}, format="json").status_code \
        == 201
    assert client.put(objects, {"key": "a/b", "value": [1]}, format="json").status_code == 200
    reader = api.client_for(bob)
    assert reader.get(objects).json() == {"keys": ["a/b"]}
    assert reader.get(objects + "?key=a/b").json() == {"key": "a/b", "value": [1]}
    api.assert_error(reader.delete(objects + "?key=a/b"), 403, "forbidden")
    assert client.delete(objects + "?key=a/b").status_code == 204
    api.assert_error(reader.get(objects + "?key=a/b"), 404, "not_found")


def test_a_resource_a_published_version_uses_stays(api: Api, acme: Project,
                                                   alice: User) -> None:
    create_all(api, alice, acme)
    graph = linear({"id": "kb", "kind": "knowledge", "config": {"knowledge_base": "faq"}})
    version = published(alice, acme, graph, name="Helpdesk")
    client = api.client_for(alice)
    error = api.assert_error(client.delete(resources_url(acme, "knowledge_base") + "/faq"),
                             409, "resource_in_use")
    assert error["details"]["used_by"] == [{"type": "version", "id": str(version.pk),
                                            "design": "Helpdesk", "number": 1}]
    assert "Helpdesk v1" in error["message"]
    assert client.delete(resources_url(acme, "dataset") + "/prices").status_code == 204


def test_a_draft_naming_a_deleted_resource_says_unknown_resource(
        api: Api, acme: Project, alice: User) -> None:
    create_all(api, alice, acme)
    graph = linear({"id": "store", "kind": "storage",
                    "config": {"dataset": "prices", "key": "{input}"}})
    client = api.client_for(alice)
    design = client.post("/api/v1/agent-designs",
                         {"project_id": acme.pk, "name": "Draft", "graph": graph},
                         format="json").json()
    url = f"/api/v1/agent-designs/{design['id']}/validate"
    assert client.post(url, {}, format="json").json()["runnable"] is True
    assert client.delete(resources_url(acme, "dataset") + "/prices").status_code == 204
    issues = client.post(url, {}, format="json").json()["issues"]
    assert [i["code"] for i in issues] == ["unknown_resource"]
