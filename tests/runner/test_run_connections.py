"""A run's calls to the internal listener reuse one kept-alive connection (an approval's
polls included), and the run's connections close when its resources are closed."""

from __future__ import annotations

import asyncio
import json

import httpx

from runner.http_resources import HttpResources
from runner.worker import RUN_HTTP_LIMITS


class Listener:
    """A loopback HTTP/1.1 peer: every GET answers a pending approval, kept alive."""

    def __init__(self) -> None:
        self.opened = 0
        self.closed = asyncio.Event()
        self.requests = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.opened += 1
        body = json.dumps({"id": "a", "status": "pending", "comment": None}).encode()
        try:
            while True:
                await reader.readuntil(b"\r\n\r\n")
                self.requests += 1
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                             b"content-length: %d\r\n\r\n%s" % (len(body), body))
                await writer.drain()
        except asyncio.IncompleteReadError:  # the client closed the connection
            self.closed.set()


async def calls() -> tuple[int, int, bool]:
    listener = Listener()
    server = await asyncio.start_server(listener.serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    resources = HttpResources(f"http://127.0.0.1:{port}/api/v1", "credential",
                              transport=httpx.AsyncHTTPTransport(limits=RUN_HTTP_LIMITS))
    for _ in range(5):
        assert (await resources.get_approval("a"))["status"] == "pending"
    await resources.aclose()  # the run ended
    try:
        await asyncio.wait_for(listener.closed.wait(), 2)
    except TimeoutError:
        pass
    server.close()
    return listener.opened, listener.requests, listener.closed.is_set()


def test_a_runs_calls_share_one_connection_that_closes_with_the_run() -> None:
    opened, requests, closed = asyncio.run(calls())
    assert (opened, requests, closed) == (1, 5, True)
