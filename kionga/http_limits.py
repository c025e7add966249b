"""Request limits both listeners enforce before Django sees a request (ASGI middleware).

- Bodies over the listener's limit are 413 payload_too_large, decided from
  Content-Length before a byte is read.
- Chunked bodies (Transfer-Encoding: chunked, no Content-Length) are read here, up to
  the limit, and handed on with a Content-Length: Django's WSGI handler (a2wsgi)
  reads CONTENT_LENGTH bytes, so without this a chunked body would look empty.
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

import json
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

if TYPE_CHECKING:
    from kionga.errors import ErrorCode


class RequestLimits:
    """Wraps an ASGI app: body size, chunked bodies, header count."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

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
            await _answer(send, 431, "request_header_fields_too_large",
                          f"A request may have at most {MAX_HEADER_FIELDS} header fields "
                          f"of {MAX_HEADER_BYTES} bytes in all.")
            return
        length = _content_length(headers)
        if length == -1:
            await _answer(send, 400, "invalid_request", "Content-Length must be one integer.")
            return
        if length is not None and length > self.max_body_bytes:
            await self._too_large(send)
            return
        if length is None and _is_chunked(headers):
            body = await self._read_capped(receive)
            if body is None:
                await self._too_large(send)
                return
            scope = dict(scope)
            scope["headers"] = [*(h for h in headers if h[0].lower() != b"transfer-encoding"),
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
                break  # the client went away; the app sees an empty body and no one reads
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_body_bytes:
                return None
            parts.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(parts)

    async def _too_large(self, send: Send) -> None:
        await _answer(send, 413, "payload_too_large",
                      f"The body is larger than {self.max_body_bytes} bytes.")


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


async def _answer(send: Send, status: int, code: ErrorCode, message: str) -> None:
    from kionga.errors import error_body  # imports DRF: only once Django is set up

    payload = json.dumps(error_body(code, message)).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(payload)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": payload})
