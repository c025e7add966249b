"""A real MCP server on 127.0.0.1 for tests of MCP server resources: the official
`mcp` package's FastMCP over streamable HTTP, served by uvicorn in a thread.

/mcp is the well-behaved server (tools `echo`, `add`, `big` which answers as many
characters as asked, `whoami` which tries to hand back the Authorization header it
received, `fail`, and `hang` which never answers);
/garbage answers every POST with a 200 that is not MCP (and quotes the credential);
/silent accepts the connection and never answers. The peer counts the requests each path received.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import uvicorn
from mcp.server.fastmcp import Context, FastMCP
from mcp.server.fastmcp.exceptions import ToolError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Mount, Route

TOOLS = ("add", "big", "echo", "fail", "hang", "whoami")


class McpPeer:
    def __init__(self) -> None:
        self.hits: Counter[str] = Counter()
        self.port = 0
        self._server: uvicorn.Server | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def path(self, name: str) -> str:
        return f"http://127.0.0.1:{self.port}/{name}"

    def app(self) -> Starlette:
        mcp = FastMCP("peer", host="127.0.0.1", log_level="WARNING", stateless_http=True)

        @mcp.tool(description="Say the text back.")
        def echo(text: str) -> str:
            return text

        @mcp.tool(description="Add two integers.")
        def add(a: int, b: int) -> dict[str, int]:
            return {"sum": a + b}

        @mcp.tool(description="Tell who called (it tries to hand back the credential).")
        def whoami(ctx: Context) -> str:  # type: ignore[type-arg]
            request = ctx.request_context.request
            headers = getattr(request, "headers", {})
            return f"you sent Authorization: {headers.get('authorization', '')}"

        @mcp.tool(description="Answer `size` characters.")
        def big(size: int) -> str:
            return "x" * size

        @mcp.tool(description="Always fails.")
        def fail() -> str:
            raise ToolError("the ticket system is closed")

        @mcp.tool(description="Never answers.")
        async def hang() -> str:
            await asyncio.sleep(3600)
            return "late"

        inner = mcp.streamable_http_app()

        async def count(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                self.hits[scope["path"].strip("/").split("/")[0]] += 1
            await inner(scope, receive, send)

        async def garbage(request: Request) -> Response:
            # Not JSON-RPC, and quoting the credential it was sent.
            self.hits["garbage"] += 1
            echoed = request.headers.get("authorization", "").encode()
            return Response(b"oops " + echoed, media_type="application/json")

        async def silent(request: Request) -> Response:
            self.hits["silent"] += 1
            await asyncio.sleep(3600)
            return Response(b"")

        return Starlette(
            routes=[Route("/garbage", garbage, methods=["POST", "GET", "DELETE"]),
                    Route("/silent", silent, methods=["POST", "GET", "DELETE"]),
                    Mount("/", app=count)],
            lifespan=lambda app: mcp.session_manager.run(),
        )

    @contextlib.contextmanager
    def serving(self) -> Iterator[McpPeer]:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        config = uvicorn.Config(self.app(), host="127.0.0.1", port=self.port,
                                log_level="critical", access_log=False, lifespan="on",
                                timeout_graceful_shutdown=1)
        self._server = uvicorn.Server(config)
        thread = threading.Thread(target=self._server.run, daemon=True)
        thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            assert thread.is_alive() and time.monotonic() < deadline, "MCP peer did not start"
            time.sleep(0.02)
        try:
            yield self
        finally:
            self._server.should_exit = True
            thread.join(5)


@contextlib.contextmanager
def mcp_peer() -> Iterator[McpPeer]:
    # FastMCP logs each request at INFO; the tests read answers, not its log.
    logging.getLogger("mcp").setLevel(logging.WARNING)
    with McpPeer().serving() as peer:
        yield peer
