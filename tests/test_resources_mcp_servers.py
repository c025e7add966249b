"""MCP servers as project resources: a project admin registers one (URL, secret
headers) and lists its tools from a real MCP server on loopback (the official `mcp`
package); the tools become functions `mcp:<server>/<tool>` with their input schemas,
which pickers list and validation knows. Viewers read, only admins write or list
anew, and another project's server is a 404."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from kionga.models import AuditEvent, Project
from kionga.resource_models import McpServer
from tests.conftest import Api
from tests.mcp_peer import TOOLS, McpPeer, mcp_peer
from tests.projects_helpers import resources_url
from tests.test_resources_secrets_at_rest import pg_dump
from tests.versions_helpers import linear, published

pytestmark = pytest.mark.django_db
SECRET = "Bearer mcp-canary-4f1e2d"


@pytest.fixture
def peer() -> Iterator[McpPeer]:
    with mcp_peer() as running:
        yield running


def tools_url(project: Project, key: str = "peer") -> str:
    return resources_url(project, "mcp_server") + f"/{key}/tools"


def register(api: Api, admin: User, project: Project, url: str, key: str = "peer") -> Any:
    answer = api.client_for(admin).post(resources_url(project, "mcp_server"), {
        "id": key, "name": "Peer", "url": url,
        "secret_headers": {"Authorization": SECRET}}, format="json")
    assert answer.status_code == 201, answer.content
    return answer.json()


def test_an_admin_registers_a_server_and_lists_its_tools(
        api: Api, acme: Project, alice: User, bob: User, peer: McpPeer) -> None:
    created = register(api, alice, acme, peer.url)
    assert created["secret_header_names"] == ["Authorization"]
    assert created["tools"] == [] and created["tools_listed_at"] is None
    assert SECRET not in str(created)

    listed = api.client_for(alice).post(tools_url(acme))
    assert listed.status_code == 200, listed.content
    tools = {t["name"]: t for t in listed.json()["tools"]}
    assert sorted(tools) == sorted(TOOLS)
    assert tools["add"]["function"] == "mcp:peer/add"
    assert tools["add"]["description"] == "Add two integers."
    schema = tools["add"]["input_schema"]
    assert schema["required"] == ["a", "b"]
    assert schema["properties"]["a"]["type"] == "integer"
    assert listed.json()["tools_listed_at"]
    assert AuditEvent.objects.filter(action="resource.tools_listed", target_id="peer",
                                     actor=alice).exists()

    # Every member sees the listing, and pickers list the tools as functions.
    assert api.client_for(bob).get(tools_url(acme)).json()["tools"] == listed.json()["tools"]
    functions = api.client_for(bob).get(resources_url(acme) + "?kind=function").json()
    mcp = {f["id"]: f for f in functions["resources"] if f.get("mcp_server")}
    assert sorted(mcp) == sorted(f"mcp:peer/{name}" for name in TOOLS)
    assert mcp["mcp:peer/add"]["input_schema"] == schema


def test_validation_knows_the_listed_tools_and_no_others(
        api: Api, acme: Project, alice: User, peer: McpPeer) -> None:
    register(api, alice, acme, peer.url)
    client = api.client_for(alice)

    def issues(tool: str) -> list[str]:
        graph = linear({"id": "tool", "kind": "tool", "config": {"tool": tool}})
        answer = client.post("/api/v1/agent-designs/validate",
                             {"project_id": acme.pk, **graph}, format="json")
        assert answer.status_code == 200, answer.content
        return [i["code"] for i in answer.json()["issues"]
                if i.get("node_id") == "tool" and i["severity"] == "error"]

    # Not listed yet: no tool of the server can be named.
    assert issues("mcp:peer/add") == ["unknown_resource"]
    assert client.post(tools_url(acme)).status_code == 200
    assert issues("mcp:peer/add") == []
    assert issues("mcp:peer/nope") == ["unknown_resource"]
    assert issues("mcp:other/add") == ["unknown_resource"]


def test_a_viewer_cannot_register_or_list_anew(
        api: Api, acme: Project, alice: User, bob: User, peer: McpPeer) -> None:
    body = {"id": "peer", "url": peer.url}
    api.assert_error(api.client_for(bob).post(resources_url(acme, "mcp_server"), body,
                                              format="json"), 403, "forbidden")
    register(api, alice, acme, peer.url)
    api.assert_error(api.client_for(bob).post(tools_url(acme)), 403, "forbidden")
    api.assert_error(api.client_for(bob).delete(
        resources_url(acme, "mcp_server") + "/peer"), 403, "forbidden")
    assert peer.hits["mcp"] == 0


def test_another_projects_server_is_not_found(
        api: Api, acme: Project, alice: User, mallory: User, evil: Project,
        peer: McpPeer) -> None:
    register(api, alice, acme, peer.url)
    client = api.client_for(mallory)
    # In mallory's own project's routes, and in acme's.
    for project in (evil, acme):
        api.assert_error(client.get(tools_url(project)), 404, "not_found")
        api.assert_error(client.post(tools_url(project)), 404, "not_found")
        api.assert_error(client.patch(resources_url(project, "mcp_server") + "/peer",
                                      {"url": "https://evil.example/mcp"}, format="json"),
                         404, "not_found")
    assert peer.hits["mcp"] == 0
    # Nor can mallory's graphs name it.
    graph = linear({"id": "tool", "kind": "tool", "config": {"tool": "mcp:peer/add"}})
    api.client_for(alice).post(tools_url(acme))
    answer = client.post("/api/v1/agent-designs/validate", {"project_id": evil.pk, **graph},
                         format="json")
    assert [i["code"] for i in answer.json()["issues"]
            if i["severity"] == "error"] == ["unknown_resource"]


def test_a_changed_url_forgets_the_secret_and_the_listing(
        api: Api, acme: Project, alice: User, peer: McpPeer) -> None:
    register(api, alice, acme, peer.url)
    client = api.client_for(alice)
    assert client.post(tools_url(acme)).status_code == 200
    moved = client.patch(resources_url(acme, "mcp_server") + "/peer",
                         {"url": "https://mcp.example.com/mcp"}, format="json")
    assert moved.status_code == 200, moved.content
    assert moved.json()["secret_header_names"] == []
    assert moved.json()["tools"] == [] and moved.json()["tools_listed_at"] is None
    assert AuditEvent.objects.filter(action="resource.secret_cleared",
                                     target_id="peer").exists()


@pytest.mark.allow_output  # the refusal is logged as a warning
def test_the_egress_policy_applies(
        api: Api, acme: Project, alice: User, peer: McpPeer) -> None:
    with override_settings(KIONGA_EGRESS_ALLOW=[]):
        refused = api.client_for(alice).post(resources_url(acme, "mcp_server"),
                                             {"id": "peer", "url": peer.url}, format="json")
        api.assert_error(refused, 400, "invalid_request")
    register(api, alice, acme, peer.url)
    # Allowed when registered, refused when the policy changes: at connect time.
    with override_settings(KIONGA_EGRESS_ALLOW=[]):
        error = api.assert_error(api.client_for(alice).post(tools_url(acme)), 503,
                                 "resource_unavailable")
    assert error["message"] == "MCP server 'peer' cannot be reached."
    assert peer.hits["mcp"] == 0


@pytest.mark.allow_output  # the refusals are logged as warnings
def test_a_server_that_is_no_mcp_server_is_a_clear_error(
        api: Api, acme: Project, alice: User, peer: McpPeer) -> None:
    register(api, alice, acme, peer.path("garbage"), key="garbage")
    error = api.assert_error(api.client_for(alice).post(tools_url(acme, "garbage")), 502,
                             "resource_unavailable")
    assert error["message"] == "MCP server 'garbage' answered something that is not MCP."
    assert McpServer.objects.get(key="garbage").tools == []


@pytest.mark.django_db(transaction=True)
def test_the_headers_are_stored_encrypted_and_still_sent(
        api: Api, acme: Project, alice: User, peer: McpPeer) -> None:
    register(api, alice, acme, peer.url)
    assert "mcp-canary-4f1e2d" not in pg_dump()
    # The gateway still decrypts them to call the server.
    assert McpServer.objects.get(key="peer").secret_headers == {"Authorization": SECRET}
    assert api.client_for(alice).post(tools_url(acme)).status_code == 200


def test_a_server_a_published_version_uses_cannot_be_deleted(
        api: Api, acme: Project, alice: User, peer: McpPeer) -> None:
    register(api, alice, acme, peer.url)
    register(api, alice, acme, peer.url, key="spare")
    client = api.client_for(alice)
    assert client.post(tools_url(acme)).status_code == 200
    graph = linear({"id": "tool", "kind": "tool", "config": {"tool": "mcp:peer/add"}})
    version = published(alice, acme, graph, name="Adder")
    error = api.assert_error(client.delete(resources_url(acme, "mcp_server") + "/peer"),
                             409, "resource_in_use")
    assert error["details"]["used_by"] == [{"type": "version", "id": str(version.pk),
                                            "design": "Adder", "number": 1}]
    assert client.delete(resources_url(acme, "mcp_server") + "/spare").status_code == 204
