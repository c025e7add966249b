"""An OpenAI-compatible chat completions server on 127.0.0.1 for tests: a real protocol
peer (HTTP/1.1, chunked Server-Sent Events like vLLM or OpenAI) on its own event loop,
so hundreds of slow answers cost the test no thread each.

It streams `text` in `chunks` pieces spread over `latency` seconds (stream=true), or
answers one JSON completion after `latency`. Faults are queued: each request takes
the next one, then answers normally once the queue is empty.

- "429" / "429-retry-after": 429 with an OpenAI error body (with `Retry-After: 1`)
- "500", "503": that status
- "reset": the connection is reset (RST) before any answer
- "cut": the stream stops after its first piece; the connection closes mid-body
- "drip": the head, then one byte of a never-ending body every `drip_seconds`
"""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

Fault = str


class OpenAIPeer:
    def __init__(self, *, text: str = "Hello from the peer model", chunks: int = 4,
                 latency: float = 0.0, drip_seconds: float = 3.0) -> None:
        self.text, self.chunks, self.latency = text, chunks, latency
        self.drip_seconds = drip_seconds
        self.faults: list[Fault] = []
        self.requests = 0
        self.in_flight = 0
        self.bodies: list[dict[str, Any]] = []
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._server: asyncio.Server | None = None

    # Control, from the test's thread

    def fail(self, *faults: Fault) -> None:
        self._loop.call_soon_threadsafe(self.faults.extend, faults)

    @contextmanager
    def serving(self) -> Iterator[OpenAIPeer]:
        thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        thread.start()
        started = asyncio.run_coroutine_threadsafe(self._start(), self._loop)
        port = started.result(timeout=10)
        self.url = f"http://127.0.0.1:{port}/v1"
        try:
            yield self
        finally:
            asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            thread.join(timeout=10)
            self._loop.close()

    # The server, on its loop

    async def _start(self) -> int:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=4096)
        return int(self._server.sockets[0].getsockname()[1])

    async def _stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in asyncio.all_tasks():
            if task is not asyncio.current_task():
                task.cancel()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.requests += 1
        self.in_flight += 1
        try:
            body = await _read_request(reader)
            self.bodies.append(body)
            fault = self.faults.pop(0) if self.faults else ""
            await self._answer(fault, body, writer)
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self.in_flight -= 1
            writer.close()

    async def _answer(self, fault: Fault, body: dict[str, Any],
                      writer: asyncio.StreamWriter) -> None:
        if fault == "reset":
            sock = writer.get_extra_info("socket")
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            return
        if fault.startswith("429") or fault in ("500", "503"):
            status = int(fault[:3])
            extra = "Retry-After: 1\r\n" if fault == "429-retry-after" else ""
            error = json.dumps({"error": {"message": "slow down", "type": "rate_limit"}})
            await _send(writer, f"HTTP/1.1 {status} Error\r\nContent-Type: application/json"
                                f"\r\nContent-Length: {len(error)}\r\n{extra}"
                                f"Connection: close\r\n\r\n{error}")
            return
        if fault == "drip":
            await _send(writer, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
            while True:
                await _send(writer, _chunk(" "))
                await asyncio.sleep(self.drip_seconds)
        if not body.get("stream"):
            await asyncio.sleep(self.latency)
            answer = json.dumps(_completion(self.text))
            await _send(writer, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                f"Content-Length: {len(answer)}\r\nConnection: close\r\n\r\n"
                                f"{answer}")
            return
        await _send(writer, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n")
        pieces = _split(self.text, self.chunks)
        for piece in pieces:
            await asyncio.sleep(self.latency / len(pieces))
            await _send(writer, _chunk(_event({"choices": [{"index": 0,
                                                            "delta": {"content": piece}}]})))
            if fault == "cut":
                return  # closed without the last chunk: an incomplete body
        words = len(self.text.split())
        await _send(writer, _chunk(_event({"choices": [], "usage": {
            "prompt_tokens": 3, "completion_tokens": words, "total_tokens": 3 + words}})))
        await _send(writer, _chunk("data: [DONE]\n\n") + "0\r\n\r\n")


async def _read_request(reader: asyncio.StreamReader) -> dict[str, Any]:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.decode("latin-1").split("\r\n")[1:]:
        name, _, value = line.partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    raw = await reader.readexactly(length) if length else b"{}"
    parsed = json.loads(raw)
    return parsed if isinstance(parsed, dict) else {}


async def _send(writer: asyncio.StreamWriter, data: str) -> None:
    writer.write(data.encode())
    await writer.drain()


def _chunk(data: str) -> str:
    return f"{len(data.encode()):x}\r\n{data}\r\n"


def _event(data: dict[str, Any]) -> str:
    return f"data: {json.dumps(data)}\n\n"


def _split(text: str, parts: int) -> list[str]:
    size = max(1, -(-len(text) // max(parts, 1)))
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _completion(text: str) -> dict[str, Any]:
    words = len(text.split())
    return {"id": "chatcmpl-peer", "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 3, "completion_tokens": words,
                      "total_tokens": 3 + words}}
