"""What N runs waiting on approvals cost the internal listener: requests and connections per second.

A loopback ASGI peer (uvicorn) answers GET agent-approvals/{id} as the listener does for
a pending request, and counts requests and the connections they came on. N waits of
the approval node (runner.components.approval._wait, through runner.http_resources)
run against it for DURATION seconds:
- `before`: the listener answers at once (no long poll): a poll every
  approval_poll_seconds;
- `after`: the listener holds a pending request's answer for ?wait= seconds.
In both, the runs share one session (runner.listener_http), as a runner process's do.

    .venv/bin/python bench/approval_polls.py [N] [DURATION]

Last line: one JSON object per mode with requests_per_s and connections_per_s.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import uvicorn

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from runner.components import approval  # noqa: E402
from runner.http_resources import HttpResources  # noqa: E402
from runner.listener_http import ListenerSession  # noqa: E402


class Peer:
    """GET agent-approvals/{id}[?wait=s]: always pending; holds the answer if `hold`."""

    def __init__(self, hold: bool) -> None:
        self.hold = hold
        self.requests = 0
        self.connections: set[tuple[str, int]] = set()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        self.requests += 1
        self.connections.add(tuple(scope["client"]))  # type: ignore[arg-type]
        query = dict(p.split("=", 1) for p in scope["query_string"].decode().split("&") if p)
        if self.hold and "wait" in query:
            await asyncio.sleep(float(query["wait"]))
        body = json.dumps({"id": scope["path"].rsplit("/", 1)[-1], "status": "pending",
                           "comment": None}).encode()
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})


def serve(peer: Peer) -> tuple[uvicorn.Server, int]:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(peer, log_level="warning", lifespan="off",
                                           backlog=4096, limit_concurrency=None))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    return server, port


async def one_wait(port: int, index: int, shared: ListenerSession) -> None:
    resources = HttpResources(f"http://127.0.0.1:{port}/api/v1", "credential", timeout=30.0,
                              session=shared)
    ctx: Any = SimpleNamespace(run=SimpleNamespace(
        resources=resources, request=SimpleNamespace(approval_poll_seconds=0.5)))
    try:
        await approval._wait(ctx, f"apr-{index}", time.monotonic() + 3600)
    finally:
        await resources.aclose()


async def measure(port: int, count: int, duration: float) -> None:
    shared = ListenerSession()
    tasks = [asyncio.create_task(one_wait(port, i, shared)) for i in range(count)]
    await asyncio.sleep(duration)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await shared.aclose()


def run(mode: str, count: int, duration: float) -> dict[str, Any]:
    peer = Peer(hold=mode == "after")
    server, port = serve(peer)
    began = time.monotonic()
    asyncio.run(measure(port, count, duration))
    took = time.monotonic() - began
    server.should_exit = True
    return {"mode": mode, "waiting": count, "seconds": round(took, 1),
            "requests_per_s": round(peer.requests / took, 1),
            "connections_per_s": round(len(peer.connections) / took, 1)}


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    duration = float(sys.argv[2]) if len(sys.argv) > 2 else 30.0
    print(json.dumps([run(mode, count, duration) for mode in ("before", "after")]))


if __name__ == "__main__":
    main()
