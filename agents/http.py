"""Plain ASGI plumbing of the agent runtime: the request's bounded body, its caller's key,
JSON and Server-Sent Events answers, and the HTTP parser uvicorn runs (httptools with
a bound on a request's head). No framework: five routes do not need one.

Body bounds: a Content-Length that is not one non-negative decimal number (e.g. `-1`,
two different values) is 400 before anything is read; above MAX_BODY, or a chunked
body growing past it, is 413. (httptools refuses most malformed lengths itself; this
holds whatever the server lets through.)
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any, Final

from contracts.agent_runtime import API_KEY_PREFIX, INVALID_API_KEY
from runner.http_head import HeadBoundHttpToolsProtocol

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY: Final = 1_000_000
MAX_KEY_CHARS: Final = 200
AUTHENTICATE: Final = 'Bearer realm="agent"'
# The `type` an OpenAI client reads from an error, per status.
ERROR_TYPES: Final = {400: "invalid_request_error", 401: "authentication_error",
                      404: "not_found_error", 405: "invalid_request_error",
                      408: "invalid_request_error", 413: "invalid_request_error",
                      429: "rate_limit_error", 431: "invalid_request_error"}
# A request's head: at most this many bytes (as h11's bound), within this many seconds.
MAX_HEAD_BYTES: Final = 16 * 1024
HEAD_TIMEOUT_SECONDS: Final = 10.0


class HttpError(Exception):
    """An error answer: status, code, message and extra headers."""

    def __init__(self, status: int, code: str, message: str,
                 headers: Iterable[tuple[str, str]] = ()) -> None:
        super().__init__(message)
        self.status, self.code, self.message, self.headers = status, code, message, list(headers)


def error_body(status: int, code: str, message: str) -> dict[str, Any]:
    """The platform's error shape, with the `type` OpenAI's clients read."""
    return {"error": {"code": code, "message": message,
                      "type": ERROR_TYPES.get(status, "server_error")}}


class BoundedHttpProtocol(HeadBoundHttpToolsProtocol):
    """The runtime's HTTP parser (agents/serve.py): httptools, its head bounded in bytes
    and time (runner.http_head), refusals in the platform's error shape."""

    max_head_bytes = MAX_HEAD_BYTES

    def head_timeout(self) -> float:
        return HEAD_TIMEOUT_SECONDS

    def error_json(self, status: int, code: str, message: str) -> bytes:
        return dumps(error_body(status, code, message))


def header(scope: Scope, name: bytes) -> list[bytes]:
    return [value for key, value in scope.get("headers", []) if key.lower() == name]


def caller_key(scope: Scope) -> str:
    """The key of `Authorization: Bearer kak_...`, or 401 (the gateway judges it)."""
    values = header(scope, b"authorization")
    parts = values[0].decode("latin-1").split() if len(values) == 1 else []
    if (len(parts) != 2 or parts[0].lower() != "bearer" or not parts[1].startswith(API_KEY_PREFIX)
            or len(parts[1]) > MAX_KEY_CHARS):
        raise HttpError(401, INVALID_API_KEY, "Send 'Authorization: Bearer <agent API key>'.",
                        [("WWW-Authenticate", AUTHENTICATE)])
    return parts[1]


async def read_body(scope: Scope, receive: Receive) -> bytes:
    lengths = set(header(scope, b"content-length"))
    if len(lengths) > 1 or any(not value.isdigit() for value in lengths):
        raise HttpError(400, "invalid_request", "Content-Length must be one non-negative number.")
    length = next(iter(lengths), b"0")
    if len(length) > len(str(MAX_BODY)) or int(length) > MAX_BODY:
        raise HttpError(413, "payload_too_large", f"The body is larger than {MAX_BODY} bytes.")
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise HttpError(400, "invalid_request", "The client went away.")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY:
            raise HttpError(413, "payload_too_large",
                            f"The body is larger than {MAX_BODY} bytes.")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def read_json(scope: Scope, receive: Receive) -> Any:
    body = await read_body(scope, receive)
    try:
        return json.loads(body or b"{}")
    except (ValueError, RecursionError):  # RecursionError: nested past the parser's depth
        raise HttpError(400, "invalid_json", "The body is not JSON.") from None


def replay(body: bytes, receive: Receive) -> Receive:
    """A receive that hands the body read already, then the client's own messages."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return again


def dumps(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


async def send_json(send: Send, status: int, body: Any,
                    headers: Iterable[tuple[str, str]] = ()) -> None:
    data = dumps(body)
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
        *((k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers)]})
    await send({"type": "http.response.body", "body": data})


async def send_error(send: Send, error: HttpError) -> None:
    await send_json(send, error.status, error_body(error.status, error.code, error.message),
                    error.headers)


async def start_stream(send: Send) -> None:
    await send({"type": "http.response.start", "status": 200, "headers": [
        (b"content-type", b"text/event-stream; charset=utf-8"),
        (b"cache-control", b"no-cache"), (b"x-accel-buffering", b"no")]})


async def send_chunk(send: Send, data: bytes, *, last: bool = False) -> None:
    await send({"type": "http.response.body", "body": data, "more_body": not last})


def sse(data: Any, event: str | None = None, id: int | None = None) -> bytes:
    lines = ([f"id: {id}"] if id is not None else []) + ([f"event: {event}"] if event else [])
    payload = data if isinstance(data, str) else dumps(data).decode("utf-8")
    return ("\n".join([*lines, f"data: {payload}"]) + "\n\n").encode("utf-8")
