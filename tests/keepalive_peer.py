"""An HTTP/1.1 server on 127.0.0.1 that keeps its connections open between answers and
counts the connections it accepted, on its own event loop: for tests of connection
reuse. A JSON body with "stream": true is answered with chunked Server-Sent Events (an
OpenAI-compatible stream ending in `[DONE]`); any other request with a chat completion
(Content-Length)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager

COMPLETION = json.dumps({"choices": [{"message": {"content": "hi"}}],
                         "usage": {"prompt_tokens": 1, "completion_tokens": 1}}).encode()
EVENTS = (b'data: {"choices":[{"delta":{"content":"h"}}]}\n\n'
          b'data: {"choices":[{"delta":{"content":"i"}}]}\r\n\r\n'
          b"data: [DONE]\n\n")


class KeepAlivePeer:
    def __init__(self, *, cut_after: int | None = None) -> None:
        # cut_after: reset the connection after this many bytes of the event stream.
        self.cut_after = cut_after
        self.accepted = 0
        self.requests = 0
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._writers: list[asyncio.StreamWriter] = []

    @contextmanager
    def serving(self) -> Iterator[KeepAlivePeer]:
        """Serve; `url` is the base URL (http://127.0.0.1:port) meanwhile."""
        thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        thread.start()
        server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._serve, "127.0.0.1", 0), self._loop).result(10)
        self.url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
        try:
            yield self
        finally:
            asyncio.run_coroutine_threadsafe(self._stop(server), self._loop).result(10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            thread.join(10)
            self._loop.close()

    async def _stop(self, server: asyncio.Server) -> None:
        server.close()
        for writer in self._writers:
            writer.close()
        for task in asyncio.all_tasks():
            if task is not asyncio.current_task():
                task.cancel()

    async def _serve(self, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        self._writers.append(writer)
        try:
            while True:
                head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
                self.requests += 1
                length = next((int(line.split(":", 1)[1]) for line in head
                               if line.lower().startswith("content-length:")), 0)
                body = await reader.readexactly(length)
                if b'"stream":true' in body.replace(b" ", b""):
                    await self._stream(writer)
                else:
                    writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                 b"Content-Length: %d\r\n\r\n%s"
                                 % (len(COMPLETION), COMPLETION))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _stream(self, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     b"Transfer-Encoding: chunked\r\n\r\n")
        body = EVENTS if self.cut_after is None else EVENTS[:self.cut_after]
        for piece in (body[:7], body[7:]):  # a line split across two writes
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            await writer.drain()
            await asyncio.sleep(0.01)
        if self.cut_after is not None:
            writer.transport.abort()  # a reset mid-body
            raise ConnectionError
        writer.write(b"0\r\n\r\n")
