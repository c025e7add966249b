"""Request limits both listeners enforce before Django sees a request (ASGI middleware).

A request refused here still gets Django's answer: it goes on without its body and
with the refusal noted in its scope (REFUSAL), and kionga.middleware.RequestRefusals
answers it after the host check and with every header Django's middleware sets
(HSTS behind TLS, CSP…), `Connection: close` included, so the rest of its body is
never read.

- Bodies over the listener's limit are 413 payload_too_large, decided from
  Content-Length before a byte is read.
- Every body is read here, whole, before the request goes on: within
  KIONGA_BODY_TIMEOUT_SECONDS from its first byte awaited, or the answer is 408
  request_timeout and the connection closes. The event loop waits on a slow client,
  never a worker thread (Django's WSGI handler would read the body in one):
  twenty clients dripping bodies cannot take the threads every other request needs.
- Chunked bodies (Transfer-Encoding: chunked, no Content-Length) are read up to the
  limit and handed on with a Content-Length: Django's WSGI handler reads
  CONTENT_LENGTH bytes, so without it a chunked body would look empty.
- Header names with an underscore are dropped (WSGI's environ would read them as
  their dashed twins; Django's ASGI handler drops them too).
- More header fields than MAX_HEADER_FIELDS, or more than MAX_HEADER_BYTES of them,
  is 431. What a client can make the server buffer before that is bounded by the
  HTTP parser (kionga.http_protocol, see the Procfile: it refuses a head still
  incomplete past 24 KiB, so at most two 64 KiB reads plus 24 KiB).

kionga.parsers refuses oversized bodies too, for requests that do not come through
here (the test client, a WSGI server).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any, Final

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

# Browsers send ~15 header fields, proxies add a few; 100 is Node's and h11's spirit.
MAX_HEADER_FIELDS: Final = 100
# Names and values together; the same figure as the parser's incomplete-event limit.
MAX_HEADER_BYTES: Final = 16 * 1024
# The scope key of a refusal for Django to answer: (status, error code, message).
REFUSAL: Final = "kionga.refusal"

if TYPE_CHECKING:
    from kionga.errors import ErrorCode


class _ClientLeft(Exception):
    """The client went away before its body was whole."""


class RequestLimits:
    """Wraps an ASGI app: body size and time, chunked bodies, header count."""

    def __init__(self, app: ASGIApp, max_body_bytes: int,
                 body_timeout: float | None = None) -> None:
        from django.conf import settings

        self.app = app
        self.max_body_bytes = max_body_bytes
        self.body_timeout = float(settings.KIONGA_BODY_TIMEOUT_SECONDS
                                  if body_timeout is None else body_timeout)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: list[tuple[bytes, bytes]] = list(scope.get("headers", ()))
        if any(b"_" in name for name, _value in headers):
            # As Django's ASGI handler (and common proxies): a name with an underscore
            # would read as its dashed twin in WSGI's environ (Idempotency_Key as
            # Idempotency-Key); no handler sees it.
            headers = [(name, value) for name, value in headers if b"_" not in name]
            scope = dict(scope)
            scope["headers"] = headers
        if len(headers) > MAX_HEADER_FIELDS or sum(
            len(k) + len(v) for k, v in headers
        ) > MAX_HEADER_BYTES:
            await self._refuse(scope, receive, send, 431, "request_header_fields_too_large",
                               f"A request may have at most {MAX_HEADER_FIELDS} header "
                               f"fields of {MAX_HEADER_BYTES} bytes in all.")
            return
        length = _content_length(headers)
        if length == -1:
            await self._refuse(scope, receive, send, 400, "invalid_request",
                               "Content-Length must be one integer.")
            return
        if length is not None and length > self.max_body_bytes:
            await self._too_large(scope, receive, send)
            return
        chunked = length is None and _is_chunked(headers)
        if length or chunked:
            try:
                # A timeout in this task (wait_for would make a task per request).
                async with asyncio.timeout(self.body_timeout):
                    body = await self._read_capped(receive)
            except TimeoutError:
                await self._refuse(scope, receive, send, 408, "request_timeout",
                                   f"The body did not arrive within {self.body_timeout:g} s.")
                return
            except _ClientLeft:
                return  # nobody to answer
            if body is None:
                await self._too_large(scope, receive, send)
                return
            if chunked:
                scope = dict(scope)
                scope["headers"] = [
                    *(h for h in headers if h[0].lower() != b"transfer-encoding"),
                    (b"content-length", str(len(body)).encode())]
            receive = replay(body, receive)
        await self.app(scope, receive, send)

    async def _read_capped(self, receive: Receive) -> bytes | None:
        """The whole body, or None once it passes the limit."""
        parts: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                raise _ClientLeft
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            parts.append(chunk)
            if not message.get("more_body", False):
                return b"".join(parts)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._refuse(scope, receive, send, 413, "payload_too_large",
                           f"The body is larger than {self.max_body_bytes} bytes.")

    async def _refuse(self, scope: Scope, receive: Receive, send: Send, status: int,
                      code: ErrorCode, message: str) -> None:
        """Django answers the refusal (kionga.middleware.RequestRefusals): the request
        goes on with no body and the refusal in its scope."""
        refused = dict(scope)
        refused[REFUSAL] = (status, code, message)
        refused["headers"] = [(name, value) for name, value in scope.get("headers", ())
                              if name.lower() not in (b"content-length", b"transfer-encoding")]
        await self.app(refused, replay(b"", receive), send)


def _content_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    """The Content-Length, None without one, -1 when unusable (several, not a number)."""
    values = [v for k, v in headers if k.lower() == b"content-length"]
    if not values:
        return None
    if len(values) > 1 or not values[0].strip().isdigit():
        return -1
    return int(values[0])


def _is_chunked(headers: list[tuple[bytes, bytes]]) -> bool:
    return any(k.lower() == b"transfer-encoding" and b"chunked" in v.lower()
               for k, v in headers)


def replay(body: bytes, receive: Receive) -> Receive:
    """`receive` with `body` as its first (and only) request message."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()  # http.disconnect, as the server tells it

    return replayed
