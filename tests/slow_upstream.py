"""An OpenAI-compatible model server on loopback that answers slowly, for tests and
benchmarks of waiting work (a real protocol peer: HTTP/1.1, JSON, Server-Sent Events).

POST …/chat/completions answers after `latency` seconds. With "stream": true it sends
the headers at once, a role chunk, then the answer's text in `chunks` pieces spread
evenly over `latency`, a final chunk with finish_reason (and usage when
stream_options.include_usage asks), and `data: [DONE]`; without, one JSON completion
once `latency` has passed. GET …/models lists the models; GET /stats answers what the
server holds (in flight now, the peak, requests, completions, streams the client left).

One asyncio process (uvicorn, ASGI) holds thousands of streams: a waiting answer costs
a coroutine, not a thread. What each model name answers is a `Reply` (latency, chunks,
text); names without one get the default.

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
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
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
    """The ASGI application: `default` for any model name without its own in `models`."""

    default: Reply = field(default_factory=Reply)
    models: dict[str, Reply] = field(default_factory=dict)
    stats: Stats = field(default_factory=Stats)
    # Every chat request's JSON body, in arrival order (tests read what was asked).
    bodies: list[dict[str, Any]] = field(default_factory=list)
    keep_bodies: bool = True

    def reply_for(self, model: str) -> Reply:
        return self.models.get(model, self.default)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path, method = str(scope["path"]), str(scope["method"])
        if method == "POST" and path.endswith("/chat/completions"):
            await self.chat(receive, send)
        elif method == "GET" and path.endswith("/models"):
            await _json(send, 200, {"object": "list", "data": [
                {"id": name, "object": "model", "created": 0, "owned_by": "loopback"}
                for name in sorted(self.models)]})
        elif method == "GET" and path == "/stats":
            await _json(send, 200, self.stats.as_dict())
        else:
            await _json(send, 404, _error(f"No route {method} {path}.", "not_found"))

    async def chat(self, receive: Receive, send: Send) -> None:
        body = await _read_body(receive)
        try:
            doc = json.loads(body)
            messages = doc["messages"]
            model = str(doc.get("model") or "")
            if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
                raise TypeError
        except (ValueError, KeyError, TypeError):
            await _json(send, 400, _error("The body must be JSON with a messages list.",
                                          "invalid_request_error"))
            return
        if self.keep_bodies:
            self.bodies.append(doc)
        reply = self.reply_for(model)
        self.stats.requests += 1
        self.stats.in_flight += 1
        self.stats.peak_in_flight = max(self.stats.peak_in_flight, self.stats.in_flight)
        try:
            text = reply.answer(messages)
            usage = {"prompt_tokens": sum(len(str(m.get("content") or "").split())
                                          for m in messages),
                     "completion_tokens": len(text.split())}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            if doc.get("stream"):
                include_usage = bool((doc.get("stream_options") or {}).get("include_usage"))
                done = await _stream(send, model, reply, text, usage if include_usage else None)
            else:
                await asyncio.sleep(reply.latency)
                done = await _json(send, 200, _completion(model, text, usage))
            if done:
                self.stats.completed += 1
            else:
                self.stats.left += 1
        finally:
            self.stats.in_flight -= 1


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


def _chunk(ident: str, model: str, delta: dict[str, Any], finish: str | None = None,
           usage: dict[str, int] | None = None) -> bytes:
    doc: dict[str, Any] = {"id": ident, "object": "chat.completion.chunk",
                           "created": int(time.time()), "model": model,
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    if usage is not None:
        doc["usage"] = usage
    return b"data: " + json.dumps(doc).encode() + b"\n\n"


async def _stream(send: Send, model: str, reply: Reply, text: str,
                  usage: dict[str, int] | None) -> bool:
    """Stream the answer over `reply.latency`; False when the client hung up first."""
    ident = f"chatcmpl-{uuid.uuid4().hex}"
    pace = reply.latency / max(1, reply.chunks)
    try:
        await send({"type": "http.response.start", "status": 200, "headers": [
            (b"content-type", b"text/event-stream; charset=utf-8"),
            (b"cache-control", b"no-cache")]})
        await send({"type": "http.response.body", "more_body": True,
                    "body": _chunk(ident, model, {"role": "assistant", "content": ""})})
        for piece in _pieces(text, reply.chunks):
            await asyncio.sleep(pace)
            await send({"type": "http.response.body", "more_body": True,
                        "body": _chunk(ident, model, {"content": piece})})
        tail = _chunk(ident, model, {}, "stop")
        if usage is not None:
            tail += b"data: " + json.dumps({"id": ident, "object": "chat.completion.chunk",
                                            "created": int(time.time()), "model": model,
                                            "choices": [], "usage": usage}).encode() + b"\n\n"
        await send({"type": "http.response.body", "body": tail + b"data: [DONE]\n\n"})
        return True
    except OSError:  # the client hung up (uvicorn raises ClientDisconnected, an OSError)
        return False


def _completion(model: str, text: str, usage: dict[str, int]) -> dict[str, Any]:
    return {"id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion",
            "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": text}}],
            "usage": usage}


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": None, "code": None}}


async def _read_body(receive: Receive) -> bytes:
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if size <= MAX_BODY:
            chunks.append(chunk)
        if not message.get("more_body"):
            break
    return b"".join(chunks)


async def _json(send: Send, status: int, doc: dict[str, Any]) -> bool:
    data = json.dumps(doc).encode()
    try:
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(data)).encode())]})
        await send({"type": "http.response.body", "body": data})
        return True
    except OSError:
        return False


def _server(app: SlowUpstream) -> uvicorn.Server:
    config = uvicorn.Config(app, lifespan="off", access_log=False, log_level="warning",
                            backlog=4096, timeout_keep_alive=30)
    return uvicorn.Server(config)


def _bound_socket(port: int = 0) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    return sock


@contextmanager
def serving_slow(app: SlowUpstream) -> Iterator[str]:
    """Serve `app` on a free loopback port in a thread of this process; yields its base
    URL (…/v1, as OpenAI clients take it) and stops it after."""
    sock = _bound_socket()
    server = _server(app)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the slow upstream did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    finally:
        server.should_exit = True
        thread.join(10)
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
    _server(app).run(sockets=[sock])


if __name__ == "__main__":
    main(sys.argv[1:])
