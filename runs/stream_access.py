"""A long event stream checks again, now and then, that its caller may still read the run.

A stream lives for minutes, and what let it open may end meanwhile: the token revoked
(wholly or for the project, with every token made from it: kionga.token_lineage), the
person removed from the project or deactivated, the session signed out. Every
KIONGA_STREAM_RECHECK_SECONDS the stream asks the same access function that opened it
(the API's authentication, kionga.api_request, on a fresh read of the session, then
runs.stream_open's read), without counting a request. When
that refuses, the stream's last frame is an SSE comment with the refusal's code and
message, `: closed <code>: <message>`, and the answer ends; a client that reconnects
gets the refusal itself (401 or 404). A comment, not an event: clients that read
every event as a run event (the canvas, the CLI) are not misled, and they resume as
after any drop. A re-check the database cannot answer keeps the stream and is asked
again at the next interval: an outage ends no stream.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import Final

from django.conf import settings
from django.db import DatabaseError
from rest_framework.exceptions import APIException

from kionga.errors import describe
from kionga.stream_end import LastChunk

logger = logging.getLogger(__name__)

# Raises the APIException an opening would answer now; returns when access remains.
Check = Callable[[], Awaitable[object]]


async def rechecked(stream: AsyncIterator[bytes], check: Check) -> AsyncGenerator[bytes, None]:
    """`stream`, ended by a closing comment once `check` refuses. The stream may wait
    on Redis for long (XREAD BLOCK): its next chunk is awaited in a task of its own, so
    a re-check falls due on time whatever the stream is doing."""
    loop = asyncio.get_running_loop()
    every = float(settings.KIONGA_STREAM_RECHECK_SECONDS)
    due = loop.time() + every
    pending: asyncio.Task[bytes | None] | None = None
    try:
        while True:
            if loop.time() >= due:
                closing = await _closing(check)
                if closing is not None:
                    await _cancel(pending)
                    pending = None
                    yield closing
                    return
                due = loop.time() + every
            if pending is None:
                pending = asyncio.ensure_future(_next(stream))
            done, _waiting = await asyncio.wait({pending}, timeout=due - loop.time())
            if not done:
                continue
            chunk, pending = pending.result(), None
            if chunk is None:
                return
            yield chunk
            if isinstance(chunk, LastChunk):
                return
    finally:
        await _cancel(pending)
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


# How long a cancelled read may take to end before it is cancelled again.
RECANCEL_SECONDS: Final = 0.1


async def _cancel(task: asyncio.Task[bytes | None] | None) -> None:
    """Cancel `task` and wait for its end. Cancelled again until it ends: Python 3.11's
    asyncio.wait_for loses a cancellation that arrives as its own future completes
    (CPython gh-86296), and redis-py awaits wait_for as it connects, so a stream whose
    client left just then would otherwise live on until its next Redis answer, holding
    the server's stop for up to the keep-alive interval."""
    if task is None:
        return
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=RECANCEL_SECONDS)
    if not task.cancelled():
        task.exception()  # retrieved: it ended on its own meanwhile


async def _next(stream: AsyncIterator[bytes]) -> bytes | None:
    try:
        return await anext(stream)
    except StopAsyncIteration:
        return None


async def _closing(check: Check) -> LastChunk | None:
    """The closing comment when `check` refuses; None while access remains."""
    try:
        await check()
    except APIException as refused:
        code, message, _details = describe(refused)
        return LastChunk(f": closed {code}: {' '.join(message.split())}\n\n".encode())
    except DatabaseError:
        logger.warning("an event stream's access re-check failed; asked again at the next",
                       exc_info=True)
    return None
