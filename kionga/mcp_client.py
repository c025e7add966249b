"""Calls from the gateway to a project's MCP server (streamable HTTP), with the
official `mcp` client: tools/list and tools/call, each in a session of its own.

The session's HTTP goes through kionga.upstream's rules: the egress policy's
transport, no proxies from the environment, redirects only within the server's
origin (the mcp client's rule), the secret headers on every request, and at most
upstream.MAX_ANSWER_BYTES read in all. Every failure is an APIError of the one error
mapping (kionga.upstream): a server that cannot be reached is resource_unavailable
(503, the same words whatever the cause), one that answers something that is not MCP
or too much is resource_unavailable (502), one that stops answering once reached is
resource_unavailable (504); a tool that reports an error is tool_failed (422).
Nothing the server says reaches an answer before it is scrubbed of the secret headers.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio
import httpx
import pydantic
from mcp import ClientSession, McpError, types
from mcp.client.streamable_http import streamable_http_client

from kionga import egress, upstream
from kionga.errors import APIError

logger = logging.getLogger(__name__)
T = TypeVar("T")

MAX_ERROR_CHARS = 500
MAX_LIST_PAGES = 10


class _Trouble:
    """What went wrong inside the mcp client's own tasks (a malformed message, an
    answer past the bound), which it would otherwise only log while the request waits:
    it ends the caller's wait at once (`scope`), and says what it was."""

    def __init__(self) -> None:
        self.problem = ""
        self.scope = anyio.CancelScope()

    def report(self, problem: str) -> None:
        if not self.problem:
            self.problem = problem
            self.scope.cancel()

    async def on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            self.report("answered something that is not MCP")
        await anyio.lowlevel.checkpoint()


class _CappedStream(httpx.AsyncByteStream):
    def __init__(self, inner: httpx.AsyncByteStream, budget: list[int],
                 trouble: _Trouble) -> None:
        self._inner, self._budget, self._trouble = inner, budget, trouble

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._budget[0] -= len(chunk)
            if self._budget[0] < 0:
                self._trouble.report(f"answered more than {upstream.MAX_ANSWER_BYTES} bytes")
                raise httpx.ReadError("answer past the bound")
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class _CappedTransport(httpx.AsyncBaseTransport):
    """The egress-guarded transport, reading at most MAX_ANSWER_BYTES in all."""

    def __init__(self, trouble: _Trouble) -> None:
        self._inner = egress.guarded_async_transport()
        self._budget = [upstream.MAX_ANSWER_BYTES]
        self._trouble = trouble

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self._inner.handle_async_request(request)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _CappedStream(response.stream, self._budget, self._trouble)
        return response

    async def aclose(self) -> None:
        await self._inner.aclose()


def secret_headers(stored: Any) -> dict[str, str]:
    headers = stored if isinstance(stored, dict) else {}
    return {str(k): v for k, v in headers.items() if isinstance(v, str)}


@asynccontextmanager
async def _session(url: str, headers: dict[str, str], timeout: float,
                   trouble: _Trouble) -> AsyncIterator[ClientSession]:
    http = httpx.AsyncClient(headers=headers, timeout=timeout, follow_redirects=False,
                             trust_env=False, transport=_CappedTransport(trouble))
    async with http, streamable_http_client(url, http_client=http) as (read, write, _), \
            ClientSession(read, write, message_handler=trouble.on_message) as session:
        yield session


async def in_session(what: str, url: str, headers: dict[str, str], timeout: float,
                     work: Callable[[ClientSession], Awaitable[T]]) -> T:
    """work(session) in a new, initialized session, all within `timeout` seconds."""
    trouble = _Trouble()
    reached = False
    try:
        with anyio.fail_after(timeout):
            async with _session(url, headers, timeout, trouble) as session:
                with trouble.scope:
                    await session.initialize()
                    reached = True
                    return await work(session)
    except APIError:
        raise
    except TimeoutError:
        if not reached and not trouble.problem:
            raise upstream.unreachable(what, TimeoutError()) from None
        if not trouble.problem:
            raise upstream.unavailable(what, f"did not answer within {timeout:g} s",
                                       504) from None
    except McpError as exc:
        if reached:
            raise _refused(what, str(exc), headers) from None
        trouble.report("refused the MCP handshake")
    except (pydantic.ValidationError, RuntimeError, ValueError):
        trouble.report("answered something that is not MCP")
    except Exception as exc:  # refused, reset, DNS, egress policy, an HTTP error status
        if not trouble.problem:
            raise upstream.unreachable(what, exc) from None
    raise upstream.unavailable(what, trouble.problem or "answered something that is not MCP",
                               502)


def _refused(what: str, message: str, headers: dict[str, str]) -> APIError:
    text = upstream.scrub(message, upstream.secret_values(headers.values()))
    return APIError(422, "tool_failed", f"{upstream.capital(what)} answered an error: "
                                        f"{str(text)[:MAX_ERROR_CHARS]}")


async def list_tools(what: str, url: str, headers: dict[str, str],
                     timeout: float) -> list[types.Tool]:
    """Every tool the server lists (following its pages, at most MAX_LIST_PAGES)."""
    async def work(session: ClientSession) -> list[types.Tool]:
        found: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            found += page.tools
            cursor = page.nextCursor
            if not cursor:
                break
        return found

    return await in_session(what, url, headers, timeout, work)


async def call_tool(what: str, url: str, headers: dict[str, str], timeout: float,
                    tool: str, arguments: dict[str, Any]) -> Any:
    """The tool's answer as JSON (scrubbed): its structured content when it has some,
    else its text (texts joined by blank lines), else its contents as objects."""
    async def work(session: ClientSession) -> types.CallToolResult:
        # send_request, not call_tool: that one lists the tools again on each call
        # to check answers against output schemas we pass on as data anyway.
        request = types.ClientRequest(types.CallToolRequest(
            params=types.CallToolRequestParams(name=tool, arguments=arguments)))
        return await session.send_request(request, types.CallToolResult)

    result = await in_session(what, url, headers, timeout, work)
    secrets = upstream.secret_values(headers.values())
    output = upstream.scrub(_output(result), secrets)
    if result.isError:
        text = output if isinstance(output, str) else str(output)
        raise APIError(422, "tool_failed", f"{upstream.capital(what)} failed: "
                                           f"{text[:MAX_ERROR_CHARS]}")
    return output


def _output(result: types.CallToolResult) -> Any:
    if isinstance(result.structuredContent, dict) and not result.isError:
        return result.structuredContent
    contents = result.content
    if all(isinstance(c, types.TextContent) for c in contents):
        return "\n\n".join(c.text for c in contents if isinstance(c, types.TextContent))
    return [c.model_dump(mode="json", exclude_none=True) for c in contents]
