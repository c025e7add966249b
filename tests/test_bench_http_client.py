"""bench/http_client.py, the benchmark's light client, is a fair client: it reads sized
and chunked answers to their end, keeps its connection alive between requests, and
connects again when the server closed it (figures measured with it must be real runs).
Its asyncio pool reads a stream as it comes and tells a cut stream from an ended one
(the capacity bench's sse_resumed and sse_lost rest on it)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from bench import http_client
from bench.http_client import AsyncClient, Connection, alines, lines
from tests.loopback import QuietHandler, serving

FRAMES = [b"retry: 2000\n\n", b"id: 0\nevent: run.started\ndata: {}\n", b"\n",
          b"id: 1\nevent: run.completed\ndata: {}\n\n"]


class Handler(QuietHandler):
    protocol_version = "HTTP/1.1"  # kept alive unless the answer says close
    ports: list[int] = []

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        self.ports.append(self.client_address[1])
        sent = json.loads(self.read_body())
        if self.path == "/close":
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(b"{}")
            self.close_connection = True
            return
        if self.headers["Accept"] == "text/event-stream":
            self.send_response(201)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for frame in FRAMES:  # one chunk each, flushed apart
                self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
                self.wfile.flush()
                time.sleep(0.01)
            self.wfile.write(b"0\r\n\r\n")
            return
        self.answer(200, {"echo": sent, "auth": self.headers["Authorization"]})


def test_sized_and_chunked_answers_are_read_whole_on_one_kept_alive_connection() -> None:
    Handler.ports = []
    with serving(Handler) as url:
        conn = Connection(url, "kio_token")
        assert conn.json("POST", "/a", {"n": 1}) == (
            200, {"echo": {"n": 1}, "auth": "Bearer kio_token"})
        streamed = conn.send("POST", "/runs", {"n": 2}, accept="text/event-stream")
        assert streamed.status == 201
        assert list(lines(streamed)) == b"".join(FRAMES).decode().split("\n")[:-1]
        assert conn.json("POST", "/a", {"n": 3})[0] == 200
    assert len(Handler.ports) == 3 and len(set(Handler.ports)) == 1


def test_a_connection_the_server_closed_is_opened_again() -> None:
    Handler.ports = []
    with serving(Handler) as url:
        conn = Connection(url, "kio_token")
        assert conn.json("POST", "/close", {}) == (200, {})
        assert conn.json("POST", "/a", {"n": 1})[0] == 200
    assert len(set(Handler.ports)) == 2


class StreamHandler(QuietHandler):
    """GET /stream: FRAMES as a chunked SSE answer, one chunk each, flushed apart (then
    its end); GET /cut: the first two frames, then the connection closes mid-answer;
    GET /who: the Authorization and Last-Event-ID it was sent."""

    protocol_version = "HTTP/1.1"
    ports: list[int] = []
    gap = 0.05

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self.ports.append(self.client_address[1])
        if self.path == "/who":
            self.answer(200, {"auth": self.headers["Authorization"],
                              "last": self.headers["Last-Event-ID"]})
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            for frame in FRAMES[:2] if self.path == "/cut" else FRAMES:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(frame), frame))
                self.wfile.flush()
                time.sleep(self.gap)
            if self.path == "/cut":
                self.close_connection = True
                return
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            self.close_connection = True  # the client gave up (the timeout's test)


def test_the_async_client_reads_a_chunked_stream_as_it_comes_and_keeps_its_connection() -> None:
    StreamHandler.ports = []

    async def scenario(url: str) -> tuple[list[tuple[str, float]], float, Any]:
        client = AsyncClient(url, "kio_admin")
        try:
            began = time.monotonic()
            answer = await client.send("GET", "/stream", accept="text/event-stream")
            assert answer.status == 200
            got = [(line, time.monotonic() - began) async for line in alines(answer)]
            # The next request reuses the connection the stream's end released; a
            # request's own token and headers replace the client's.
            who = await client.json("GET", "/who")
            other = await client.send("GET", "/who", token="kio_viewer",
                                      headers={"Last-Event-ID": "7"})
            return got, time.monotonic() - began, (who, json.loads(await other.read()))
        finally:
            await client.aclose()

    with serving(StreamHandler) as url:
        got, _, (who, other) = asyncio.run(scenario(url))
    assert [line for line, _ in got] == b"".join(FRAMES).decode().split("\n")[:-1]
    # Each frame was read when it came, not at the answer's end.
    first_frame_at = got[1][1]
    last_frame_at = got[-1][1]
    assert last_frame_at - first_frame_at >= 2 * StreamHandler.gap
    assert who == (200, {"auth": "Bearer kio_admin", "last": None})
    assert other == {"auth": "Bearer kio_viewer", "last": "7"}
    assert len(StreamHandler.ports) == 3 and len(set(StreamHandler.ports)) == 1


def test_the_async_client_detects_a_stream_cut_before_its_end() -> None:
    StreamHandler.ports = []

    async def scenario(url: str) -> tuple[list[str], BaseException | None, int]:
        client = AsyncClient(url, "kio_admin")
        got: list[str] = []
        try:
            answer = await client.send("GET", "/cut", accept="text/event-stream")
            try:
                async for line in alines(answer):
                    got.append(line)
            except ConnectionError as error:
                cut: BaseException | None = error
            else:
                cut = None
            # The cut connection is not reused: the next request opens another.
            status, _ = await client.json("GET", "/who")
            return got, cut, status
        finally:
            await client.aclose()

    with serving(StreamHandler) as url:
        got, cut, status = asyncio.run(scenario(url))
    assert isinstance(cut, ConnectionError)
    assert got == b"".join(FRAMES[:2]).decode().split("\n")[:-1]
    assert status == 200
    assert len(set(StreamHandler.ports)) == 2


def test_the_async_client_opens_again_a_kept_connection_the_server_closed() -> None:
    Handler.ports = []

    async def scenario(url: str) -> list[tuple[int, Any]]:
        client = AsyncClient(url, "kio_token")
        try:
            closed = await client.json("POST", "/close", {})
            await asyncio.sleep(0.05)  # the server's close arrives meanwhile
            return [closed, await client.json("POST", "/a", {"n": 1})]
        finally:
            await client.aclose()

    with serving(Handler) as url:
        answers = asyncio.run(scenario(url))
    assert answers == [(200, {}), (200, {"echo": {"n": 1}, "auth": "Bearer kio_token"})]
    assert len(set(Handler.ports)) == 2


def test_an_async_answer_that_does_not_come_in_time_is_a_timeout() -> None:
    StreamHandler.gap = 0.3

    async def scenario(url: str) -> None:
        client = AsyncClient(url, "kio_token", timeout=0.1)
        try:
            answer = await client.send("GET", "/stream", accept="text/event-stream")
            await answer.read()
        finally:
            await client.aclose()

    try:
        with serving(StreamHandler) as url, pytest.raises(TimeoutError):
            asyncio.run(scenario(url))
    finally:
        StreamHandler.gap = 0.05


def test_an_async_connection_idle_too_long_is_not_used_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A server closes idle kept-alive connections (uvicorn after 5 s): one idle past
    MAX_IDLE is closed by the client, not met mid-close by the next request."""
    monkeypatch.setattr(http_client, "MAX_IDLE", 0.1)
    Handler.ports = []

    async def scenario(url: str) -> None:
        client = AsyncClient(url, "kio_token")
        try:
            await client.json("POST", "/a", {"n": 1})
            await client.json("POST", "/a", {"n": 2})  # at once: the same connection
            await asyncio.sleep(0.2)
            await client.json("POST", "/a", {"n": 3})
        finally:
            await client.aclose()

    with serving(Handler) as url:
        asyncio.run(scenario(url))
    assert len(Handler.ports) == 3
    assert Handler.ports[0] == Handler.ports[1] != Handler.ports[2]
