"""MCP servers' tools as functions: their names, and the listing a project keeps.

A tool `search` of the project's MCP server `docs` is the function `mcp:docs/search`
(docs/decisions/mcp-tools-are-functions.md): a tool node names it like any function,
validation finds it in the server's stored listing (McpServer.tools, refreshed by a
project admin, never fetched while validating), and a run calls it through
functions/{name}/invoke. Server keys are slugs, so the first "/" ends the key and
"mcp:" can never be a Function's key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any, Final

from contracts.conversions import text_to_json
from contracts.registry import LIMITS

PREFIX: Final = "mcp:"
# MCP's tool names are letters, digits, "_", "-", "." (and "/" in some servers), at
# most 128: others are left out of the listing (and so cannot be named).
TOOL_NAME: Final = re.compile(r"^[A-Za-z0-9_.\-/]{1,128}$")
MAX_TOOLS: Final = 200
MAX_DESCRIPTION_CHARS: Final = 2_000
# A schema longer than a config value is kept as {} (the canvas would not show it).
MAX_SCHEMA_CHARS: Final = LIMITS["max_config_value_chars"]


def function_name(server_key: str, tool: str) -> str:
    return f"{PREFIX}{server_key}/{tool}"


def split_name(name: str) -> tuple[str, str] | None:
    """(server key, tool) of an MCP function name, else None."""
    if not name.startswith(PREFIX):
        return None
    server, sep, tool = name[len(PREFIX):].partition("/")
    return (server, tool) if sep and server and tool else None


def is_mcp_name(name: str) -> bool:
    return name.startswith(PREFIX)


def listed_tool(tools: Any, name: str) -> dict[str, Any] | None:
    """The stored listing's entry for tool `name`, if the listing has it."""
    for tool in tools if isinstance(tools, list) else []:
        if isinstance(tool, dict) and tool.get("name") == name:
            return tool
    return None


def tool_entry(name: Any, description: Any, input_schema: Any) -> dict[str, Any] | None:
    """One tool as stored (None for a name no graph could carry)."""
    if not isinstance(name, str) or not TOOL_NAME.match(name):
        return None
    schema = input_schema if isinstance(input_schema, dict) else {}
    if len(json.dumps(schema, ensure_ascii=False)) > MAX_SCHEMA_CHARS:
        schema = {}
    text = description if isinstance(description, str) else ""
    return {"name": name, "description": text[:MAX_DESCRIPTION_CHARS],
            "input_schema": schema}


def existing_functions(servers: Iterable[tuple[str, Any]], names: set[str]) -> set[str]:
    """The MCP function names among `names` that the servers' (key, tools) list."""
    tools = {key: {t.get("name") for t in listing if isinstance(t, dict)}
             for key, listing in servers if isinstance(listing, list)}
    found = set()
    for name in names:
        parts = split_name(name)
        if parts and parts[1] in tools.get(parts[0], ()):
            found.add(name)
    return found


def server_keys(names: Iterable[str]) -> set[str]:
    return {parts[0] for parts in map(split_name, names) if parts}


def arguments_of(value: Any) -> dict[str, Any] | None:
    """A tool call's arguments from the node's input: a JSON object as it is, text by
    the reference's text → json (contracts.conversions), nothing as {}; None for what
    is no object (a list, a number)."""
    if value is None:
        return {}
    if isinstance(value, str):
        value = text_to_json(value)
    return value if isinstance(value, dict) else None
