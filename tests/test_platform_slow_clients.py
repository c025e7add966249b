"""Slow clients hold no worker thread (docs/decisions/slow-clients.md), over real HTTP
against the Procfile's gateway line: twenty connections dripping a POST body one byte a
second cannot stop `/healthz` or another person's request, and they get 408
request_timeout once KIONGA_BODY_TIMEOUT_SECONDS is past; a half-sent head gets 408
after KIONGA_HEAD_TIMEOUT_SECONDS, a silent connection is closed."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from kionga.tokens import issue_token
from tests.test_platform_request_limits import procfile_gateway

pytestmark = pytest.mark.django_db(transaction=True)  # the listener has its own connection

BODY_TIMEOUT = 4
HEAD_TIMEOUT = 3
DRIPPERS = 20


@pytest.fixture(scope="module")
def gateway(django_db_setup: Any, django_db_blocker: Any) -> Iterator[str]:
    with procfile_gateway(KIONGA_BODY_TIMEOUT_SECONDS=str(BODY_TIMEOUT),
                          KIONGA_HEAD_TIMEOUT_SECONDS=str(HEAD_TIMEOUT)) as base:
        yield base


def connect(gateway: str) -> socket.socket:
    url = urlsplit(gateway)
    return socket.create_connection((url.hostname or "127.0.0.1", url.port or 80), timeout=30)


def read_all(sock: socket.socket) -> bytes:
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    return answer


class Dripper(threading.Thread):
    """A POST to the sign-in page whose body arrives one byte a second."""

    def __init__(self, gateway: str) -> None:
        super().__init__(daemon=True)
        self.sock = connect(gateway)
        self.answer = b""
        self.answered_after = 0.0

    def run(self) -> None:
        started = time.monotonic()
        self.sock.sendall(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                          b"Cookie: csrftoken=" + b"a" * 32 + b"\r\n"
                          b"Content-Type: application/x-www-form-urlencoded\r\n"
                          b"Content-Length: 1000\r\n\r\n")
        self.sock.settimeout(1.0)
        try:
            while not self.answer:
                try:
                    self.sock.sendall(b"x")
                    self.answer = self.sock.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    break
            self.sock.settimeout(10)
            # Piece by piece into the answer: a reset after the answer (the listener
            # closed with dripped bytes unread) must not lose what already arrived.
            while chunk := self.sock.recv(65536):
                self.answer += chunk
        except OSError:
            pass
        self.answered_after = time.monotonic() - started
        self.sock.close()


def test_drippers_hold_no_thread_and_get_408(gateway: str, bob: Any) -> None:
    token = issue_token(bob, "slow clients")
    drippers = [Dripper(gateway) for _ in range(DRIPPERS)]
    for dripper in drippers:
        dripper.start()
    time.sleep(1.0)  # every dripper's head is in, its body dripping
    with httpx.Client(base_url=gateway, timeout=BODY_TIMEOUT) as client:
        for _ in range(3):
            started = time.monotonic()
            assert client.get("/healthz").status_code == 200
            me = client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
            assert me.status_code == 200, me.text
            assert time.monotonic() - started < 2.0
            time.sleep(0.5)
    for dripper in drippers:
        dripper.join(timeout=BODY_TIMEOUT + 15)
    for dripper in drippers:
        head, _, body = dripper.answer.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 408 "), dripper.answer[:300]
        assert json.loads(body)["error"]["code"] == "request_timeout"
        # Django's answer: the headers every answer has, and the connection closed.
        assert b"x-content-type-options: nosniff" in head.lower()
        assert b"connection: close" in head.lower()
        assert BODY_TIMEOUT - 1 <= dripper.answered_after < BODY_TIMEOUT + 10


def test_a_half_sent_head_gets_408_and_a_silent_connection_is_closed(gateway: str) -> None:
    with connect(gateway) as half, connect(gateway) as silent:
        half.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        started = time.monotonic()
        answer = read_all(half)
        assert answer.startswith(b"HTTP/1.1 408 "), answer[:200]
        assert json.loads(answer.partition(b"\r\n\r\n")[2])["error"]["code"] == \
            "request_timeout"
        assert HEAD_TIMEOUT - 1 <= time.monotonic() - started < HEAD_TIMEOUT + 5
        assert read_all(silent) == b""  # closed, nothing said


def test_an_idle_kept_alive_connection_is_closed(gateway: str) -> None:
    with connect(gateway) as sock:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 ")
        started = time.monotonic()
        rest = read_all(sock)  # nothing more is asked: uvicorn's keep-alive timeout
        assert b"HTTP/1.1" not in rest
        assert time.monotonic() - started < 5 + 3
