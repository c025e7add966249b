"""An OpenAI-compatible model server on loopback that answers slowly, for tests and
benchmarks of waiting work (a real protocol peer: HTTP/1.1, JSON, Server-Sent Events).

POST …/chat/completions answers after `latency` seconds. With "stream": true it sends
the headers at once, a role chunk, then the answer's text in `chunks` pieces spread
evenly over `latency`, a final chunk with finish_reason (and usage when
stream_options.include_usage asks), and `data: [DONE]`; without, one JSON completion
once `latency` has passed. GET …/models lists the models; GET /stats answers what the
server holds (in flight now, the peak, requests, completions, streams the client left).

One asyncio process holds thousands of streams: a waiting answer costs a timer, not a
thread nor a coroutine (a protocol of its own on httptools, no server framework: the
benchmarks run it on the cores of the stack they measure). What each model name
answers is a `Reply` (latency, chunks, text); names without one get the default.

In-process (tests):
    with serving_slow(SlowUpstream(Reply(latency=2, chunks=4))) as base_url: ...
As a process of its own (benchmarks: its CPU stays out of the client's):
    .venv/bin/python -m tests.slow_upstream --port 0 --latency 5 --chunks 20 \\
        --reply 'judge:2:4:{"scores": {"task_completion": 0.9}, "reason": "ok"}'
prints its base URL (…/v1) on its first line of output, then serves until SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import threading
import time
import uuid
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, cast

import httptools
import uvloop

MAX_BODY = 4 * 1024 * 1024


@dataclass(frozen=True)
class Reply:
    """How one model answers: after `latency` seconds, `text` in `chunks` pieces when
    streamed (None: "Slow answer to: <the last message>")."""

    latency: float = 5.0
    chunks: int = 10
    text: str | None = None

    def answer(self, messages: list[dict[str, Any]]) -> str:
        if self.text is not None:
            return self.text
        last = str(messages[-1].get("content") or "") if messages else ""
        return f"Slow answer to: {last[:200]}"


@dataclass
class Stats:
    in_flight: int = 0
    peak_in_flight: int = 0
    requests: int = 0
    completed: int = 0
    left: int = 0  # answers the client hung up on before their end

    def as_dict(self) -> dict[str, int]:
        return {"in_flight": self.in_flight, "peak_in_flight": self.peak_in_flight,
                "requests": self.requests, "completed": self.completed, "left": self.left}


@dataclass
class SlowUpstream:
    """What the server answers: `default` for any model name without its own in `models`."""

    default: Reply = field(default_factory=Reply)
    models: dict[str, Reply] = field(default_factory=dict)
    stats: Stats = field(default_factory=Stats)
    # Every chat request's JSON body, in arrival order (tests read what was asked).
    bodies: list[dict[str, Any]] = field(default_factory=list)
    keep_bodies: bool = True

    def reply_for(self, model: str) -> Reply:
        return self.models.get(model, self.default)

    def answer(self, peer: _Peer, method: str, path: str, body: bytes) -> None:
        if method == "POST" and path.endswith("/chat/completions"):
            self.chat(peer, body)
        elif method == "GET" and path.endswith("/models"):
            peer.json(200, {"object": "list", "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "loopback"}
                for name in sorted(self.models)]})
        elif method == "GET" and path == "/stats":
            peer.json(200, self.stats.as_dict())
        else:
            peer.json(404, _error(f"No route {method} {path}.", "not_found"))

    def chat(self, peer: _Peer, body: bytes) -> None:
        try:
            doc = json.loads(body)
            messages = doc["messages"]
            model = str(doc.get("model") or "")
            if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            peer.json(400, _error("The body must be JSON with a messages list.",
                                  "invalid_request_error"))
            return
        if self.keep_bodies:
            self.bodies.append(doc)
        reply = self.reply_for(model)
        self.stats.requests += 1
        self.stats.in_flight += 1
        self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.stats.in_flight)
        text = reply.answer(messages)
        usage = {"prompt_tokens": sum(len(str(m.get("content") or "").split())
                                      for m in messages),
                 "completion_tokens": len(text.split())}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        if doc.get("stream"):
            include_usage = bool((doc.get("stream_options") or {}).get("include_usage"))
            peer.stream(_Stream(model, reply, text, usage if include_usage else None))
        else:
            peer.later(reply.latency, 200, _completion(model, text, usage))

    def ended(self, completed: bool) -> None:
        """A chat answer ended: sent whole, or the client hung up first."""
        self.stats.in_flight -= 1
        if completed:
            self.stats.completed += 1
        else:
            self.stats.left += 1


def _pieces(text: str, count: int) -> list[str]:
    """`text` cut into `count` consecutive pieces (some empty when it is shorter)."""
    count = max(1, count)
    size, extra = divmod(len(text), count)
    pieces, start = [], 0
    for i in range(count):
        end = start + size + (1 if i < extra else 0)
        pieces.append(text[start:end])
        start = end
    return pieces


def _chunk(ident: str, created: int, model: str, delta: dict[str, Any],
           finish: str | None = None) -> bytes:
    doc = {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model,
           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    return b"data: " + json.dumps(doc).encode() + b"\n\n"


class _Stream:
    """One streamed answer: its SSE chunks (the role, the text's pieces, the finish with
    the usage asked for and [DONE]) and when each is due after the start."""

    def __init__(self, model: str, reply: Reply, text: str,
                 usage: dict[str, int] | None) -> None:
        ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
        self.pace = reply.latency / max(1, reply.chunks)
        self.first = _chunk(ident, created, model, {"role": "assistant", "content": ""})
        self.pieces = [_chunk(ident, created, model, {"content": piece})
                       for piece in _pieces(text, reply.chunks)]
        tail = _chunk(ident, created, model, {}, "stop")
        if usage is not None:
            tail += b"data: " + json.dumps({"id": ident, "object": "chat.completion.chunk",
                                            "created": created, "model": model,
                                            "choices": [], "usage": usage}).encode() + b"\n\n"
        self.pieces[-1] += tail + b"data: [DONE]\n\n"  # with the last piece, as one write


def _completion(model: str, text: str, usage: dict[str, int]) -> dict[str, Any]:
    return {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion",
            "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": usage}


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


REASONS = {200: b"OK", 400: b"Bad Request", 404: b"Not Found"}
STREAM_HEAD = (b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
               b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n")


class _Peer(asyncio.Protocol):
    """One client's connection: its requests parsed by httptools (the parser uvicorn
    uses), answered one at a time on the connection, kept alive as the client asks.
    A streamed answer's pieces are timer callbacks writing to the socket: nothing per
    piece but the write (a server framework's per-message layers cost several times
    the peer's work, on the cores the stack under test has)."""

    def __init__(self, app: SlowUpstream, peers: set[_Peer]) -> None:
        self._app, self._peers = app, peers
        self._parser = httptools.HttpRequestParser(self)
        self._transport: asyncio.Transport | None = None
        self._url, self._size = b"", 0
        self._body: list[bytes] = []
        self._requests: deque[tuple[str, str, bytes, bool]] = deque()
        self._busy = False  # an answer is being sent: the next request waits for its end
        self._keep_alive = True
        self._timer: asyncio.TimerHandle | None = None
        self._chat = False  # the answer in progress is a chat answer (counted in stats)

    # asyncio's callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a cast, not an isinstance check: uvloop's transports are not asyncio's classes
        self._transport = cast(asyncio.Transport, transport)
        self._peers.add(self)

    def data_received(self, data: bytes) -> None:
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError:
            self._write(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n"
                        b"connection: close\r\n\r\n")
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._peers.discard(self)
        self._transport = None
        if self._timer is not None:  # an answer in progress: the client left before its end
            self._timer.cancel()
            self._timer = None
            if self._chat:
                self._app.ended(False)

    # httptools' callbacks
    def on_message_begin(self) -> None:
        self._url, self._body, self._size = b"", [], 0

    def on_url(self, url: bytes) -> None:
        self._url += url

    def on_body(self, body: bytes) -> None:
        self._size += len(body)
        if self._size <= MAX_BODY:
            self._body.append(body)

    def on_message_complete(self) -> None:
        path = self._url.split(b"?", 1)[0].decode()
        self._requests.append((self._parser.get_method().decode(), path,
                               b"".join(self._body), self._parser.should_keep_alive()))
        self._next()

    def _next(self) -> None:
        if self._busy or not self._requests or self._transport is None:
            return
        method, path, body, self._keep_alive = self._requests.popleft()
        self._busy, self._chat = True, False
        self._app.answer(self, method, path, body)

    # answers
    def json(self, status: int, doc: dict[str, Any]) -> None:
        data = json.dumps(doc).encode()
        self._write(b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\n"
                    b"content-length: %d\r\n%s\r\n"
                    % (status, REASONS[status], len(data), self._connection()) + data)
        self._done()

    def later(self, delay: float, status: int, doc: dict[str, Any]) -> None:
        """A chat answer `doc` after `delay` seconds."""
        self._chat = True
        self._timer = asyncio.get_running_loop().call_later(delay, self._send_later,
                                                             status, doc)

    def _send_later(self, status: int, doc: dict[str, Any]) -> None:
        self._timer = None
        self.json(status, doc)
        self._app.ended(True)

    def stream(self, answer: _Stream) -> None:
        """A chat answer streamed: the head and the role at once, then each piece at its
        time (piece i at (i + 1) × pace after the start, the last with the finish)."""
        self._chat = True
        self._write(STREAM_HEAD + self._connection() + b"\r\n" + _framed(answer.first))
        start = asyncio.get_running_loop().time()
        self._timer = asyncio.get_running_loop().call_at(start + answer.pace, self._piece,
                                                         answer, 0, start)

    def _piece(self, answer: _Stream, index: int, start: float) -> None:
        self._timer = None
        last = index == len(answer.pieces) - 1
        self._write(_framed(answer.pieces[index]) + (b"0\r\n\r\n" if last else b""))
        if last:
            self._app.ended(True)
            self._done()
        else:
            self._timer = asyncio.get_running_loop().call_at(
                start + (index + 2) * answer.pace, self._piece, answer, index + 1, start)

    def _connection(self) -> bytes:
        return b"" if self._keep_alive else b"connection: close\r\n"

    def _write(self, data: bytes) -> None:
        if self._transport is not None:
            self._transport.write(data)

    def _done(self) -> None:
        self._busy = False
        if not self._keep_alive:
            self.close()
        else:
            self._next()

    def close(self) -> None:
        if self._transport is not None:
            self._transport.close()


def _framed(data: bytes) -> bytes:
    """One chunk of a chunked body."""
    return b"%x\r\n%s\r\n" % (len(data), data)


def _bound_socket(port: int = 0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


async def _serve(app: SlowUpstream, sock: socket.socket, stop: asyncio.Future[None],
                 ready: threading.Event | None = None) -> None:
    """Serve `app` on `sock` until `stop` is done; then close every connection."""
    loop = asyncio.get_running_loop()
    peers: set[_Peer] = set()
    server = await loop.create_server(lambda: _Peer(app, peers), sock=sock, backlog=4096)
    if ready is not None:
        ready.set()
    try:
        await stop
    finally:
        server.close()
        for peer in list(peers):
            peer.close()
        await server.wait_closed()
        await asyncio.sleep(0.01)  # the connections' closes run


@contextmanager
def serving_slow(app: SlowUpstream) -> Iterator[str]:
    """Serve `app` on a free loopback port in a thread of this process; yields its base
    URL (…/v1, as OpenAI clients take it) and stops it after."""
    sock = _bound_socket()
    loop = asyncio.new_event_loop()
    stop: asyncio.Future[None] = loop.create_future()
    ready = threading.Event()
    thread = threading.Thread(target=loop.run_until_complete,
                              args=(_serve(app, sock, stop, ready),), daemon=True)
    thread.start()
    if not ready.wait(10):
        raise RuntimeError("the slow upstream did not start")
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    finally:
        loop.call_soon_threadsafe(stop.set_result, None)
        thread.join(10)
        loop.close()
        sock.close()


def parse_reply(spec: str) -> tuple[str, Reply]:
    """NAME:LATENCY:CHUNKS[:TEXT] (the text may hold colons)."""
    name, latency, chunks, *text = spec.split(":", 3)
    return name, Reply(float(latency), int(chunks), text[0] if text else None)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--latency", type=float, default=5.0)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--reply", action="append", default=[], metavar="NAME:S:N[:TEXT]",
                        help="what one model name answers (repeatable)")
    args = parser.parse_args(argv)
    app = SlowUpstream(Reply(args.latency, args.chunks), dict(map(parse_reply, args.reply)),
                       keep_bodies=False)
    sock = _bound_socket(args.port)
    print(f"http://127.0.0.1:{sock.getsockname()[1]}/v1", flush=True)

    async def forever() -> None:
        await _serve(app, sock, asyncio.get_running_loop().create_future())

    uvloop.run(forever())  # as uvicorn serves (its loop="auto"); SIGTERM ends the process


if __name__ == "__main__":
    main(sys.argv[1:])
