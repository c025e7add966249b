"""The one HTTP session a runner process's event loop keeps to the gateway's internal
listener, shared by every run on that loop (docs/decisions/runner-listener-session.md).

aiohttp rather than a client per run: a run's calls reuse kept-alive connections other
runs opened (no connect, no client to build), and a request costs about a third of
httpx/httpcore's CPU (llhttp in C; no anyio cancel scopes). Nothing of a run stays in
the session: its credential goes in each request's Authorization header, the session
keeps no cookies (a DummyCookieJar), follows no redirect and reads no proxy from the
environment.

Whether a request's connection came from the pool (a reused kept-alive connection) is
what the retry rule of runner.http_resources needs; `was_reused()` tells it, in the task
that made the request.
"""

from __future__ import annotations

import asyncio
import contextvars
import ssl
import weakref
from typing import TYPE_CHECKING, Any, Final

import aiohttp

if TYPE_CHECKING:
    from aiohttp.client_reqrep import ClientRequest
    from aiohttp.connector import Connection
    from aiohttp.tracing import Trace

# A kept-alive connection is dropped after this many idle seconds: below uvicorn's
# default keep-alive (5 s, the internal listener's), so a connection the listener is
# about to close for idleness is not reused.
KEEPALIVE_SECONDS: Final = 4.0

# Whether the current task's last connection came from the pool (set by _Connector).
_REUSED: contextvars.ContextVar[bool] = contextvars.ContextVar("listener_reused",
                                                                default=False)


class _Connector(aiohttp.TCPConnector):
    """aiohttp's connector, telling (in the requesting task's context) whether the
    connection it hands out served a request before."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._served: weakref.WeakSet[Any] = weakref.WeakSet()

    async def connect(self, req: ClientRequest, traces: list[Trace],
                      timeout: aiohttp.ClientTimeout) -> Connection:
        _REUSED.set(False)  # until a connection is had: none was reused
        connection = await super().connect(req, traces, timeout)
        protocol = connection.protocol
        _REUSED.set(protocol in self._served)
        self._served.add(protocol)
        return connection


def was_reused() -> bool:
    """Whether the last request of the current task went out on a reused connection."""
    return _REUSED.get()


class ListenerSession:
    """One aiohttp session, made on first use in the running loop (aiohttp binds it to
    one). No bound on connections: the runs in flight bound them (a bound would queue a
    run's call behind other runs' long polls and model calls)."""

    def __init__(self, ssl_context: ssl.SSLContext | None = None,
                 read_bufsize: int = 2 ** 16) -> None:
        self._ssl: ssl.SSLContext | bool = ssl_context if ssl_context is not None else True
        self._read_bufsize = read_bufsize
        self._session: aiohttp.ClientSession | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            self._session = aiohttp.ClientSession(
                connector=_Connector(limit=0, ssl=self._ssl,
                                     keepalive_timeout=KEEPALIVE_SECONDS),
                cookie_jar=aiohttp.DummyCookieJar(), read_bufsize=self._read_bufsize)
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            session, self._session = self._session, None
            await session.close()


# The session of each event loop that asked for one (a runner process has one loop; a
# loop that ends takes its entry with it).
_sessions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, ListenerSession] = (
    weakref.WeakKeyDictionary())


def loop_session(ssl_context: ssl.SSLContext | None = None) -> ListenerSession:
    """The running loop's shared session (made with `ssl_context` on first use)."""
    loop = asyncio.get_running_loop()
    shared = _sessions.get(loop)
    if shared is None:
        shared = _sessions[loop] = ListenerSession(ssl_context)
    return shared


async def close_loop_session() -> None:
    """Close the running loop's session, if it has one (the process is about to exit)."""
    shared = _sessions.pop(asyncio.get_running_loop(), None)
    if shared is not None:
        await shared.aclose()
