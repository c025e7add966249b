"""A loopback TCP proxy a test can cut and restore, between the stack and PostgreSQL.

Cut, it behaves as a stopped database server: every open connection is dropped and
new ones are refused. Restored, it listens again on the same port, so the processes
that were told its address find the database back without being restarted. The
shared PostgreSQL itself is never touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class CuttableProxy:
    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.port = 0  # chosen when it first listens
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="cuttable-proxy")
        self._server: asyncio.Server | None = None
        self._open: set[asyncio.StreamWriter] = set()

    def start(self) -> CuttableProxy:
        self._thread.start()
        self._call(self._listen())
        return self

    def cut(self) -> None:
        """Drop every connection and refuse new ones."""
        self._call(self._cut())

    def restore(self) -> None:
        if self._server is None:
            self._call(self._listen())

    def stop(self) -> None:
        self._call(self._cut())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()

    def _call(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(10)

    async def _listen(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = int(self._server.sockets[0].getsockname()[1])

    async def _cut(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._open):
            writer.transport.abort()
        self._open.clear()

    async def _serve(self, client_reader: asyncio.StreamReader,
                     client_writer: asyncio.StreamWriter) -> None:
        try:
            upstream_reader, upstream_writer = await asyncio.open_connection(*self.target)
        except OSError:
            client_writer.transport.abort()
            return
        pair = {client_writer, upstream_writer}
        self._open.update(pair)
        pipes = [asyncio.ensure_future(_pipe(client_reader, upstream_writer)),
                 asyncio.ensure_future(_pipe(upstream_reader, client_writer))]
        try:
            await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
        finally:  # one side is gone: so is the other
            self._open.difference_update(pair)
            for writer in pair:
                writer.transport.abort()
            for pipe in pipes:
                pipe.cancel()
            await asyncio.gather(*pipes, return_exceptions=True)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    # Ends when its side closes or drops (the cut); _serve then drops the other side.
    with contextlib.suppress(OSError, asyncio.IncompleteReadError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
