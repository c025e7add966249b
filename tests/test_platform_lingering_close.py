"""An answer sent before the request was read whole still reaches its client, over real
HTTP against the Procfile's gateway line (docs/decisions/lingering-close.md).

A listener that closes a socket with unread bytes in it makes the kernel reset the
connection, and a reset can discard the answer before the client reads it: a 413 for a
body sent at once, a 431 for a huge head, a 408 for a dripped body would show up as
"connection reset". The listeners half-close instead (the answer, then FIN), read and
drop what still arrives for a short while, and close once the client has."""

from __future__ import annotations

import json
import socket
import threading
from typing import Any
from urllib.parse import urlsplit

import pytest

from contracts.registry import CEILINGS
from tests.test_platform_request_limits import gateway  # noqa: F401 (module fixture)

pytestmark = pytest.mark.django_db(transaction=True)  # the listener has its own connection

TRIES = 8


def connect(base: str) -> socket.socket:
    url = urlsplit(base)
    return socket.create_connection((url.hostname or "127.0.0.1", url.port or 80), timeout=10)


def answer_while_sending(base: str, head: bytes, body: bytes) -> bytes:
    """Sends head and body as fast as the socket takes them, in a thread, while this
    thread reads the answer to its end: to the listener's FIN, not a reset."""
    with connect(base) as sock:
        def send() -> None:
            try:
                sock.sendall(head + body)
            except OSError:
                pass  # the listener stopped reading: expected once it has answered

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            answer += b"<reset>"
        sock.close()
        sender.join(timeout=10)
    return answer


def status_and_code(answer: bytes) -> tuple[bytes, str]:
    head, _, body = answer.partition(b"\r\n\r\n")
    code = "reset" if body.endswith(b"<reset>") else json.loads(body)["error"]["code"]
    return head.split(b" ", 2)[1] if head else b"", code


def test_a_body_past_the_limit_sent_at_once_gets_its_413(gateway: str, alice: Any) -> None:  # noqa: F811
    size = CEILINGS["max_body_bytes"] * 4
    head = (b"POST /api/v1/agent-designs/validate HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\n"
            b"Content-Length: " + str(size).encode() + b"\r\n\r\n")
    for _ in range(TRIES):
        answer = answer_while_sending(gateway, head, b"x" * size)
        assert status_and_code(answer) == (b"413", "payload_too_large"), answer[:300]


def test_a_huge_head_sent_at_once_gets_its_431(gateway: str) -> None:  # noqa: F811
    head = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + b"a" * 2_000_000
    for _ in range(TRIES):
        answer = answer_while_sending(gateway, head, b"")
        assert status_and_code(answer) == (b"431", "request_header_fields_too_large"), answer[:300]
