"""The MCP server admin page: headers are write-only (never shown back), the listed
tools are shown but not editable, and a URL moved to another host clears the headers
(audited) and forgets the listing, as through the API."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from kionga.mcp_tools import tool_entry
from kionga.models import AuditEvent, Project
from kionga.resource_models import McpServer

pytestmark = pytest.mark.django_db
HEADER = "Bearer admin-mcp-canary-77aa"


def make(acme: Project) -> McpServer:
    return McpServer.objects.create(project=acme, key="docs", url="https://a.example.com/mcp",
                                    secret_headers={"Authorization": HEADER},
                                    tools=[tool_entry("search", "Search the docs.", {})])


def post(staff: Client, acme: Project, server: McpServer, url: str, headers: str = "") -> None:
    response = staff.post(f"/admin/kionga/mcpserver/{server.pk}/change/", {
        "project": acme.pk, "key": "docs", "name": "", "description": "", "url": url,
        "new_secret_headers": headers})
    assert response.status_code == 302, response.content.decode()[:3000]


def test_the_page_shows_the_tools_and_never_the_headers(staff: Client, acme: Project) -> None:
    server = make(acme)
    page = staff.get(f"/admin/kionga/mcpserver/{server.pk}/change/").content.decode()
    assert "search" in page and HEADER not in page and "admin-mcp-canary" not in page
    assert 'name="tools"' not in page


def test_a_moved_url_clears_the_headers_and_the_listing(staff: Client, acme: Project) -> None:
    server = make(acme)
    post(staff, acme, server, "https://a.example.com/mcp/v2")  # same host: kept
    kept = McpServer.objects.get(pk=server.pk)
    assert kept.secret_headers == {"Authorization": HEADER} and kept.tools == []
    McpServer.objects.filter(pk=server.pk).update(tools=[tool_entry("search", "", {})])
    post(staff, acme, server, "https://b.example.com/mcp")
    moved = McpServer.objects.get(pk=server.pk)
    assert moved.secret_headers == {} and moved.tools == []
    event = AuditEvent.objects.get(action="resource.secret_cleared", target_id="docs")
    assert event.details["fields"] == ["secret_headers"] and event.details["via"] == "admin"


def test_the_egress_policy_applies(staff: Client, acme: Project) -> None:
    with override_settings(KIONGA_EGRESS_ALLOW=[]):
        response = staff.post("/admin/kionga/mcpserver/add/", {
            "project": acme.pk, "key": "local", "name": "", "description": "",
            "url": "http://127.0.0.1:9/mcp", "new_secret_headers": ""})
    assert response.status_code == 200 and "egress policy" in response.content.decode()
    assert not McpServer.objects.filter(key="local").exists()
