"""A stream's last chunk is sent with the end of the answer (one ASGI message, one
write): a client following a run gets its last event and the end of the answer in
one read, not two.

A StreamingHttpResponse goes out through Django's ASGI handler, which sends every
chunk with `more_body` and then an empty message to end the answer. A stream marks
its last chunk as `LastChunk`; `ending(chunks)` (what the response iterates) notes on
the request's ASGI context that the answer ends with it, and `EndsWithLastChunk`
(around Django's handler) sends that chunk's bytes together with the end.
"""

from __future__ import annotations

import contextvars
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class LastChunk(bytes):
    """A stream's last chunk: sent together with the end of the answer."""


class _Ending:
    """One answer's state: whether its last chunk is on its way."""

    def __init__(self) -> None:
        self.last = False


_ENDING: contextvars.ContextVar[_Ending | None] = contextvars.ContextVar("kionga_ending",
                                                                         default=None)


async def ending(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """`chunks` up to and including the first LastChunk, noted for EndsWithLastChunk."""
    async for chunk in chunks:
        last = isinstance(chunk, LastChunk)
        if last:
            state = _ENDING.get()
            if state is not None:
                state.last = True
        yield chunk
        if last:
            return


class EndsWithLastChunk:
    """Wraps an ASGI app (Django's handler): once a LastChunk was noted, its bytes are
    held and sent with the answer's end."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        state = _Ending()
        held: list[bytes] = []

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.body" and state.last:
                held.append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                message = {"type": "http.response.body", "body": b"".join(held),
                           "more_body": False}
            await send(message)

        token = _ENDING.set(state)
        try:
            await self.app(scope, receive, sending)
        finally:
            _ENDING.reset(token)
