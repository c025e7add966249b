"""An MCP server's tools: listed anew from the server (tools/list) by a project admin,
and kept as the server's listing (McpServer.tools), which validation and runs use.

The listing is stored scrubbed of the server's secret headers: a tool description
echoing a header reaches no canvas, graph or event.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.utils import timezone

from kionga import audit, mcp_client, mcp_tools, upstream
from kionga.models import Project
from kionga.resource_models import McpServer

# Below the gateway's request time: a person waits for this answer.
LIST_TIMEOUT = 20.0


def do_list_tools(actor: User, project: Project, server: McpServer) -> McpServer:
    """tools/list now; the listing replaces the stored one (audited with its names)."""
    headers = mcp_client.secret_headers(server.secret_headers)
    listed = async_to_sync(mcp_client.list_tools)(f"MCP server {server.key!r}", server.url,
                                                 headers, LIST_TIMEOUT)
    secrets = upstream.secret_values(headers.values())
    entries: list[dict[str, Any]] = []
    for tool in listed:
        entry = mcp_tools.tool_entry(tool.name, tool.description, tool.inputSchema)
        if entry is not None and len(entries) < mcp_tools.MAX_TOOLS:
            entries.append(upstream.scrub(entry, secrets))
    server.tools = entries
    server.tools_listed_at = timezone.now()
    server.save(update_fields=["tools", "tools_listed_at"])
    audit.record("resource.tools_listed", project=project, actor=actor,
                 target_type="mcp_server", target_id=server.key,
                 details={"tools": [e["name"] for e in entries],
                          "left_out": len(listed) - len(entries)})
    return server
