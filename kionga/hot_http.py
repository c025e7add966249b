"""Answers of the hot routes (kionga.hot_routes) as plain ASGI, with what Django's
stack would add: the security headers of its middleware and the API's error shape."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
from collections.abc import AsyncIterator, Iterable
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils.module_loading import import_string
from rest_framework import exceptions as drf

from kionga.errors import describe, error_body, error_headers
from kionga.hot_routes import Receive, Scope, Send

# The middleware that set headers on every answer (settings.MIDDLEWARE).
_HEADER_MIDDLEWARE = ("django.middleware.security.SecurityMiddleware",
                      "csp.middleware.CSPMiddleware",
                      "django.middleware.clickjacking.XFrameOptionsMiddleware")


@functools.cache
def security_headers() -> tuple[tuple[bytes, bytes], ...]:
    """The headers Django's own middleware puts on an API answer (CSP, nosniff,
    referrer, opener and frame policies), from that middleware: one implementation."""
    request = HttpRequest()
    request.method, request.path = "GET", "/api/v1/"
    response = HttpResponse()
    for path in _HEADER_MIDDLEWARE:
        middleware: Any = import_string(path)(HttpResponse)  # get_response is never called
        response = middleware.process_response(request, response)
    return tuple((name.lower().encode("latin-1"), value.encode("latin-1"))
                 for name, value in response.headers.items() if name != "Content-Type")


def header(scope: Scope, name: bytes) -> str | None:
    """The request header `name` (lower case), or None; a repeated one is None too."""
    found = [v for k, v in scope.get("headers", ()) if k.lower() == name]
    return found[0].decode("latin-1") if len(found) == 1 else None


async def read_body(receive: Receive) -> bytes | None:
    """The request body (kionga.http_limits bounded it), or None if the client left."""
    parts: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        parts.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(parts)


def dumps(data: Any) -> bytes:
    # As DRF's JSONRenderer: compact, UTF-8.
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


async def answer_json(send: Send, status: int, data: Any,
                      extra: Iterable[tuple[bytes, bytes]] = ()) -> None:
    body = dumps(data)
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
        *security_headers(), *extra]})
    await send({"type": "http.response.body", "body": body})


async def answer_error(send: Send, exc: drf.APIException) -> None:
    """The answer kionga.errors.api_exception_handler gives for exc."""
    code, message, details = describe(exc)
    extra = [(k.lower().encode("latin-1"), v.encode("latin-1"))
             for k, v in error_headers(exc).items()]
    await answer_json(send, exc.status_code, error_body(code, message, details), extra)


class LastChunk(bytes):
    """A stream's last chunk: sent together with the end of the answer (one write, so
    the client gets the last event and the end at once, not in two reads)."""


async def answer_stream(send: Send, receive: Receive, status: int,
                        chunks: AsyncIterator[bytes],
                        extra: Iterable[tuple[bytes, bytes]] = ()) -> None:
    """A text/event-stream answer of `chunks`, stopped when the client goes away."""
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache"),
        (b"x-accel-buffering", b"no"), *security_headers(), *extra]})

    async def pump() -> None:
        async for chunk in chunks:
            last = isinstance(chunk, LastChunk)
            await send({"type": "http.response.body", "body": chunk, "more_body": not last})
            if last:
                return
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def gone() -> None:
        while (await receive())["type"] != "http.disconnect":
            pass

    tasks = [asyncio.ensure_future(pump()), asyncio.ensure_future(gone())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, OSError):
                await task
        # The stream's own cleanup (its place in the stream budget) runs now.
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()
