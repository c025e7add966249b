"""The HTTP client of the resource calls (kionga.upstream): aiohttp sessions kept on the
event loop, one per (egress policy, project), so a project's calls reuse its kept-alive
connections to an upstream and never another project's
(docs/decisions/upstream-connections-per-project.md).

Every connection a session opens passes the egress policy its session was made under
(kionga.egress.resolve_checked: resolve, check each address, connect to a checked
one; TLS verifies the URL's host name). A session is handed out only while its policy
is the current one: after a change of the policy's settings, calls open connections
checked under the new one, and the old sessions close once their calls are done.

aiohttp rather than httpx for these calls: reading an answer costs a fraction of
httpcore's CPU (llhttp in C; no anyio cancel scope and generator layers per read), the
same reason as the agent runtime's client (agents/client.py).
"""

from __future__ import annotations

import asyncio
import socket
import weakref
from collections.abc import AsyncIterator, Hashable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import aiohttp
from aiohttp.abc import ResolveResult

from kionga import egress

# A kept-alive connection is closed after this many idle seconds: below the common
# keep-alive of servers (uvicorn and Node 5 s, nginx 75 s), so a connection its peer is
# closing is seldom reused (a POST on one is not retried: the call fails, the runner's
# retry policy applies).
KEEPALIVE_SECONDS: Final = 4.0
# How often idle sessions (no call in flight, their connections closed) are dropped.
SWEEP_SECONDS: Final = 30.0
# Longest head line and header field an upstream may send (h11's whole-head bound, which
# the httpx client had).
MAX_HEAD_FIELD: Final = 16384


class GuardedConnector(aiohttp.TCPConnector):
    """A connector whose every connection goes to an address the policy allows."""

    def __init__(self, policy: egress.Policy) -> None:
        # No DNS cache: each new connection resolves and checks again (a name may move).
        # No bound on connections: the project's and resources' call slots bound them
        # (kionga.upstream.call_slot), one connection per call in flight.
        super().__init__(limit=0, use_dns_cache=False, ssl=egress.ssl_context(),
                         keepalive_timeout=KEEPALIVE_SECONDS)
        self._policy = policy

    async def _resolve_host(self, host: str, port: int,
                            traces: Sequence[Any] | None = None) -> list[ResolveResult]:
        # Overridden rather than given as a resolver: aiohttp skips its resolver for an
        # address literal, which must pass the policy too. tests/test_internal_egress.py
        # and test_upstream_connections.py fail if a new aiohttp stops calling this.
        addresses = await egress.resolve_checked(self._policy, host, port)
        return [{"hostname": host, "host": str(address), "port": port,
                 "family": socket.AF_INET6 if address.version == 6 else socket.AF_INET,
                 "proto": 0, "flags": 0} for address in addresses]


@dataclass
class Entry:
    session: aiohttp.ClientSession
    users: int = 0
    idle_since: float = 0.0


class LoopSessions:
    """The sessions of one event loop, by (policy, project)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._entries: dict[tuple[egress.Policy, Hashable], Entry] = {}
        self._policy: egress.Policy | None = None
        self._next_sweep = loop.time() + SWEEP_SECONDS
        self._closing: set[aiohttp.ClientSession] = set()
        self.closer: AsyncIterator[None] | None = None

    def take(self, project: Hashable) -> Entry:
        """The project's session under the current policy, counted as in use until
        give_back."""
        policy = egress.current_policy()  # read on each call: operators' settings
        if policy is not self._policy:
            self._policy = policy
            self._sweep()
        elif self._loop.time() >= self._next_sweep:
            self._sweep()
        entry = self._entries.get((policy, project))
        if entry is None:
            session = aiohttp.ClientSession(
                connector=GuardedConnector(policy),
                # No cookies (a call's answer must not change the next call's request),
                # no proxy from the environment (it would bypass the policy), no timeout
                # of the session's own (each call sets its own).
                cookie_jar=aiohttp.DummyCookieJar(), trust_env=False,
                timeout=aiohttp.ClientTimeout(), max_line_size=MAX_HEAD_FIELD,
                max_field_size=MAX_HEAD_FIELD)
            entry = self._entries[(policy, project)] = Entry(session)
        entry.users += 1
        return entry

    def give_back(self, entry: Entry) -> None:
        entry.users -= 1
        if not entry.users:
            entry.idle_since = self._loop.time()

    def _sweep(self) -> None:
        """Close the sessions no call uses that are idle past their connections' life
        or were made under another policy (not handed out any more)."""
        now = self._loop.time()
        self._next_sweep = now + SWEEP_SECONDS
        for key, entry in list(self._entries.items()):
            if not entry.users and (key[0] != self._policy
                                    or now - entry.idle_since > KEEPALIVE_SECONDS):
                del self._entries[key]
                self._closing.add(entry.session)
                self._loop.create_task(self._close(entry.session))

    async def _close(self, session: aiohttp.ClientSession) -> None:
        try:
            await session.close()
        finally:
            self._closing.discard(session)

    async def aclose(self) -> None:
        sessions = [entry.session for entry in self._entries.values()] + list(self._closing)
        self._entries.clear()
        for session in sessions:
            await session.close()


_BY_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, LoopSessions] = (
    weakref.WeakKeyDictionary())


async def of_loop() -> LoopSessions:
    """The running loop's sessions, made on first use.

    They close when the loop ends: asyncio.run (uvicorn, and asgiref's async_to_sync
    for Django's test client, which runs each request on a loop of its own) closes
    every async generator first iterated on the loop before closing it, and
    `_close_at_loop_end` is one, kept by the sessions.
    """
    loop = asyncio.get_running_loop()
    sessions = _BY_LOOP.get(loop)
    if sessions is None:
        sessions = _BY_LOOP[loop] = LoopSessions(loop)
        sessions.closer = _close_at_loop_end(loop, sessions)
        await anext(sessions.closer)
    return sessions


async def _close_at_loop_end(loop: asyncio.AbstractEventLoop,
                             sessions: LoopSessions) -> AsyncIterator[None]:
    try:
        yield
    finally:
        _BY_LOOP.pop(loop, None)
        await sessions.aclose()
