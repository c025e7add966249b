"""The agent as an MCP server (streamable HTTP at `/mcp`), with one tool: the agent.

Stateless, JSON answers (mcp's StreamableHTTPSessionManager): every HTTP request stands
alone, so any replica serves it. Each request carries the caller's agent API key and
has it verified and counted by the gateway before mcp sees it (401/429 as HTTP
answers); a tool call then opens its turn with the key verified again but not counted
twice. The tool takes `input` (and an optional `session_id`) and answers the turn's
output as text, the whole turn answer as structured content; a turn that did not
complete is a tool error.
"""

from __future__ import annotations

import contextvars
import re
from typing import Any, Final

import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from agents.http import MAX_BODY, Receive, Scope, Send, caller_key, read_body, replay
from agents.runtime import Refused, Runtime, TurnInput

# The caller's key of the HTTP request being served. The tool handler runs in a copy of
# that request's context (the stateless server is started from the request's task, and
# anyio's tasks copy their starter's context): so it sees this key, and the caller's
# traceparent agents.app set (agents.runtime.CALLER_TRACEPARENT, the turn span's parent).
CALLER_KEY: contextvars.ContextVar[str] = contextvars.ContextVar("agent_caller_key")
MAX_INPUT_CHARS: Final = 100_000


def tool_name(runtime: Runtime) -> str:
    """The agent's name as MCP allows tool names (letters, digits, _ and -, ≤ 64)."""
    return re.sub(r"[^A-Za-z0-9_-]", "_", runtime.name)[:64] or "agent"


def build_server(runtime: Runtime) -> Server[Any, Any]:
    server: Server[Any, Any] = Server(runtime.name, version=str(runtime.native.version or ""))
    name = tool_name(runtime)
    tool = types.Tool(
        name=name, description=f"Ask the deployed agent {runtime.name} (version "
                               f"{runtime.native.version}) and get its answer.",
        inputSchema={"type": "object", "additionalProperties": False, "required": ["input"],
                     "properties": {
                         "input": {"type": "string", "maxLength": MAX_INPUT_CHARS,
                                   "description": "The turn's input."},
                         "session_id": {"type": "string", "maxLength": 200,
                                        "description": "Continue this conversation."}}})

    @server.list_tools()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        return [tool]

    @server.call_tool(validate_input=True)  # type: ignore[untyped-decorator]
    async def call(called: str, arguments: dict[str, Any]) -> types.CallToolResult:
        if called != name:
            return _error(f"Unknown tool {called!r}: this server has one, {name!r}.")
        turn = TurnInput(arguments["input"], arguments.get("session_id") or None)
        try:
            answer = await runtime.turn(CALLER_KEY.get(), turn, key_counted=True)
        except Refused as refused:
            return _error(refused.message)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=answer["output"] or "")],
            structuredContent=answer, isError=answer["status"] != "completed")

    return server


def _error(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)],
                                isError=True)


class McpEndpoint:
    """`/mcp`: the key checked, then mcp's streamable HTTP transport."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.manager = StreamableHTTPSessionManager(
            build_server(runtime), stateless=True, json_response=True,
            max_request_body_size=MAX_BODY)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        key = caller_key(scope)
        body = await read_body(scope, receive)
        await self.runtime.check_key(key)
        CALLER_KEY.set(key)
        await self.manager.handle_request(scope, replay(body, receive), send)
