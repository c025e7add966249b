"""The runtime's HTTP client for what every turn calls: the gateway's internal listener
(open, report) and the platform model. One aiohttp session shared by every turn of the
event loop (docs/decisions/agent-runtime-aiohttp-client.md).

aiohttp rather than httpx here: a request costs about a third of httpcore's CPU (its
parser is llhttp in C; no anyio cancel scopes, no per-request pool scan), and a turn
makes three of them. The session is made on first use, in the running loop (aiohttp
binds it to one), with runner.listener_http's settings (kept-alive connections idle at
most 4 s, below uvicorn's 5 s); as with httpx before it, it keeps no cookies (turns of
different callers share it), follows no redirect (a credential never goes where it was
not sent) and reads no proxy from the environment. The graph's resource calls
(runner.http_resources) share it.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final

import aiohttp
import httpx

from runner.backends.openai import ChatAnswer
from runner.listener_http import ListenerSession
from runner.request import LLMConfig

# The longest line a model's event stream may send (aiohttp reads up to twice this).
READ_BUFFER: Final = 1 << 20

# What aiohttp raises when the peer cannot be reached, is too slow or speaks no HTTP.
UNREACHABLE: Final = (aiohttp.ClientError, TimeoutError, OSError)


@dataclass(frozen=True)
class Answer:
    status: int
    headers: Mapping[str, str]  # case-insensitive
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class SharedSession(ListenerSession):
    """The one aiohttp session (runner.listener_http's: no bound on connections, the
    turns in flight bound them; one would queue turns behind each other's model calls).
    The graph's resource calls go through it too (runner.http_resources)."""

    def __init__(self) -> None:
        # httpx's context: certifi's roots, or SSL_CERT_FILE / SSL_CERT_DIR when set.
        super().__init__(httpx.create_ssl_context(), read_bufsize=READ_BUFFER)

    async def post(self, url: str, data: bytes, headers: Mapping[str, str],
                   timeout: aiohttp.ClientTimeout) -> Answer:
        """The whole answer; UNREACHABLE's errors when there is none."""
        async with self.session.post(url, data=data, headers=headers, timeout=timeout,
                                     allow_redirects=False) as response:
            return Answer(response.status, response.headers, await response.read())


class AiohttpChat:
    """runner.backends.openai.ChatHttp on the shared session."""

    def __init__(self, shared: SharedSession) -> None:
        self._shared = shared

    @asynccontextmanager
    async def post(self, url: str, body: bytes, headers: dict[str, str],
                   config: LLMConfig) -> AsyncIterator[ChatAnswer]:
        timeout = aiohttp.ClientTimeout(total=None, connect=config.connect_timeout,
                                        sock_read=config.read_timeout)
        try:
            async with self._shared.session.post(url, data=body, headers=headers,
                                                 timeout=timeout,
                                                 allow_redirects=False) as response:
                yield _AiohttpAnswer(response)
        except TimeoutError as exc:
            raise TimeoutError(str(exc) or type(exc).__name__) from None
        except (aiohttp.ClientError, OSError) as exc:
            raise ConnectionError(str(exc) or type(exc).__name__) from None


class _AiohttpAnswer:
    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status = response.status
        self.content_type = response.headers.get("content-type", "text/event-stream")

    async def lines(self) -> AsyncIterator[str]:
        try:
            async for line in self._response.content:
                yield line.decode("utf-8", errors="replace").rstrip("\r\n")
        except ValueError:  # aiohttp's "Chunk too big": a line past twice READ_BUFFER
            raise ConnectionError("the model server sent a line longer than "
                                  f"{2 * READ_BUFFER} bytes") from None

    async def body(self) -> bytes:
        return await self._response.read()
