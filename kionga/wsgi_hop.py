"""Django's WSGI handler under the ASGI server, one thread hop per ordinary answer.

a2wsgi's WSGIMiddleware hands each ASGI message between the worker thread and the event
loop as it comes (the body's read, the answer's start, its body, its end: four or five
round trips between threads per request, each a wake-up of both). Here the body is
already whole (kionga.http_limits read it, within its time limit, before any thread
takes the request), so the worker thread runs Django's handler, reads the answer whole
when Django made it whole (an HttpResponse, not a streaming one) and closes it; the
event loop then sends it. A streaming answer (a file, an export) is read a chunk per
hop, as a2wsgi reads it. The environ is a2wsgi's (`build_environ`), so Django sees the
same request either way.
"""

from __future__ import annotations

import asyncio
import contextvars
import io
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from types import TracebackType
from typing import Any, cast

from a2wsgi.wsgi import build_environ
from django.http import HttpResponseBase

Headers = list[tuple[bytes, bytes]]
ExcInfo = tuple[type[BaseException], BaseException, TracebackType]


class WSGIInOneHop:
    """An ASGI app serving `app` (a WSGI app) with `workers` threads."""

    def __init__(self, app: Any, workers: int) -> None:
        self.app = app
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="WSGI")

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = await _whole_body(receive)
        if body is None:
            return  # the client left: nobody to answer
        environ = cast(dict[str, Any],
                       build_environ(scope, io.BytesIO(body)))  # type: ignore[arg-type]
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()  # the caller's, as run_in_executor callers do
        status, headers, content, rest = await loop.run_in_executor(
            self.executor, partial(context.run, self._respond, environ))
        await send({"type": "http.response.start", "status": status, "headers": headers})
        if rest is None:
            await send({"type": "http.response.body", "body": content})
            return
        try:
            while (chunk := await loop.run_in_executor(
                    self.executor, partial(context.run, _next_chunk, rest))) is not None:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
        finally:
            await loop.run_in_executor(self.executor, partial(context.run, _close, rest))

    def _respond(self, environ: dict[str, Any]) -> tuple[int, Headers, bytes,
                                                          Iterator[bytes] | None]:
        """In a worker thread: (status, headers, whole body, None), or for a streaming
        answer (status, headers, b"", its chunks) to read and close a hop at a time."""
        started: list[Any] = []

        def start_response(status: str, headers: list[tuple[str, str]],
                           exc_info: ExcInfo | None = None) -> Any:
            started[:] = [status, headers]
            return _no_write

        answer: Iterable[bytes] = self.app(environ, start_response)
        if isinstance(answer, HttpResponseBase) and not answer.streaming:
            try:
                content = b"".join(answer)
            finally:
                answer.close()
            rest = None
        else:
            content, rest = b"", _Chunks(answer)
        status, headers = started
        return (int(status.split(" ", 1)[0]),
                [(name.strip().encode("latin1").lower(), value.strip().encode("latin1"))
                 for name, value in headers],
                content, rest)


class _Chunks(Iterator[bytes]):
    """A WSGI answer's iterable, read a chunk at a time and closed at the end."""

    def __init__(self, answer: Iterable[bytes]) -> None:
        self.answer = answer
        self.chunks = iter(answer)

    def __next__(self) -> bytes:
        return next(self.chunks)

    def close(self) -> None:
        getattr(self.answer, "close", lambda: None)()


def _next_chunk(rest: Iterator[bytes]) -> bytes | None:
    return next(rest, None)


def _close(rest: Iterator[bytes]) -> None:
    getattr(rest, "close", lambda: None)()


def _no_write(chunk: bytes) -> None:
    raise NotImplementedError("Django's handler never writes through start_response")


async def _whole_body(receive: Any) -> bytes | None:
    """The request's body (one message when kionga.http_limits read it), None when the
    client left."""
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)
