"""bench/http_client.py, the benchmark's light client, is a fair client: it reads sized
and chunked answers to their end, keeps its connection alive between requests, and
connects again when the server closed it (figures measured with it must be real runs)."""

from __future__ import annotations

import json
import time

from bench.http_client import Connection, lines
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
