"""A gateway told to stop (SIGTERM, as a deploy or a scale-down does) ends its open event
streams at once and exits, instead of waiting for streams that could last as long as
their runs: each follower's stream ends, and it reconnects with Last-Event-ID to another
gateway (the stored log first, then live: nothing is lost). A plain request still gets
its whole answer. Over the real public listener (uvicorn kionga.asgi, as the Procfile
starts it)."""

from __future__ import annotations

import socket
import time
from contextlib import ExitStack
from urllib.parse import urlsplit

import httpx
import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.tokens import issue_token
from tests.public_gateway import public_gateway_process
from tests.runs_helpers import running_events_url

# Committed data: the gateway is another process with its own connection.
pytestmark = pytest.mark.django_db(transaction=True)

# uvicorn's own graceful stop waits for every open stream, and a closed connection
# lingers up to 2 s (runner.http_head); the test's fixture (and a cluster) would wait
# longer than this, then kill.
STOPS_WITHIN = 1.5


def _lingering(base: str) -> socket.socket:
    """A connection the gateway answered and closes by lingering: its client neither
    reads further nor hangs up."""
    url = urlsplit(base)
    sock = socket.create_connection((url.hostname, url.port), timeout=10)
    sock.sendall(f"GET /healthz HTTP/1.1\r\nHost: {url.netloc}\r\n"
                 "Connection: close\r\n\r\n".encode())
    assert sock.recv(65536).startswith(b"HTTP/1.1 200")
    return sock


def test_a_stopping_gateway_ends_its_streams_and_exits(alice: User, bob: User,
                                                       acme: Project) -> None:
    url = running_events_url(alice, acme)
    auth = {"Authorization": f"Bearer {issue_token(bob, 'sse')}"}
    with public_gateway_process() as (base, process), ExitStack() as held:
        streams = []
        for _ in range(2):
            client = held.enter_context(httpx.Client(base_url=base, timeout=10.0, headers=auth))
            stream = client.send(client.build_request(
                "GET", url, headers={"Accept": "text/event-stream"}), stream=True)
            held.callback(stream.close)
            assert stream.status_code == 200
            lines = stream.iter_lines()
            assert next(lines).startswith("retry:")  # open and waiting for the run
            streams.append(lines)
        held.enter_context(_lingering(base))
        asked = time.monotonic()
        process.terminate()
        for lines in streams:  # each stream ends (cut or closed), well before its run does
            with pytest.raises((StopIteration, httpx.HTTPError)):
                while True:
                    next(lines)
        process.wait(timeout=10)
        assert time.monotonic() - asked < STOPS_WITHIN


def test_a_stream_its_client_left_is_gone_before_the_stop(alice: User, bob: User,
                                                          acme: Project) -> None:
    """The follower hangs up as its stream opens (the gateway is still connecting to
    Redis for it): the stream ends then, not at its next keep-alive, so it holds no
    stop."""
    url = running_events_url(alice, acme)
    auth = {"Authorization": f"Bearer {issue_token(bob, 'sse')}"}
    with public_gateway_process() as (base, process):
        with httpx.Client(base_url=base, timeout=10.0, headers=auth) as client:
            stream = client.send(client.build_request(
                "GET", url, headers={"Accept": "text/event-stream"}), stream=True)
            assert stream.status_code == 200
            stream.close()
        asked = time.monotonic()
        process.terminate()
        process.wait(timeout=20)
        assert time.monotonic() - asked < STOPS_WITHIN
