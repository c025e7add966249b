"""A connection lingering after its answer (runner.http_head.LingeringTransport) closes at
once when the server stops, instead of keeping the stopping process up to its linger's
end (docs/decisions/lingering-close.md). On the event loop the listeners run (uvloop)."""

from __future__ import annotations

import asyncio
import socket
import time

import uvloop

from runner.http_head import LINGER_SECONDS, LingeringTransport


async def _lost_after(stop_after: float) -> float:
    """Seconds from a lingering close to the connection's end, the server stopping
    `stop_after` seconds into the linger; its client neither sends nor hangs up."""
    loop = asyncio.get_running_loop()
    made: asyncio.Future[LingeringTransport] = loop.create_future()
    lost: asyncio.Future[float] = loop.create_future()

    class Answered(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            made.set_result(LingeringTransport(transport, loop))  # type: ignore[arg-type]

        def connection_lost(self, exc: Exception | None) -> None:
            lost.set_result(time.monotonic())

    server = await loop.create_server(Answered, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    with socket.create_connection(("127.0.0.1", port)):
        transport = await made
        closed = time.monotonic()
        transport.close()  # the answer's end: FIN, then linger
        await asyncio.sleep(stop_after)
        transport.at_once = True  # the server stops (the protocol's shutdown)
        transport.close()
        ended = await asyncio.wait_for(lost, LINGER_SECONDS + 5)
    server.close()
    return ended - closed


def test_a_linger_under_way_ends_when_the_server_stops() -> None:
    assert uvloop.run(_lost_after(0.1)) < LINGER_SECONDS / 2
