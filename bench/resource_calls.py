"""The runner's CPU per resource call to the internal listener (not a test).

    .venv/bin/python bench/resource_calls.py [--runs N] [--calls C] [--latency S]
        [--chunks K] [--rounds R]

A loopback stand-in for the internal listener (uvicorn, a process of its own, so its
CPU is not counted) answers each streamed predict after `--latency` s with `--chunks`
SSE `delta` events and `done`, as runs.internal.actions does. N runs at once, in this
process's one event loop as on a runner process, each make C streamed predicts through
runner.http_resources, built as runner.worker builds a run's client. Prints, per
round, this process's CPU ms per call (everything the calls cost the runner's loop:
the HTTP client, the SSE read, the event loop) with bench.cpu.calibration_ms(); last
line one JSON object with the median.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.cpu import calibration_ms  # noqa: E402
from runner import worker  # noqa: E402
from runner.http_resources import HttpResources  # noqa: E402

CHUNKS = int(os.environ.get("BENCH_PEER_CHUNKS", "3"))
LATENCY = float(os.environ.get("BENCH_PEER_LATENCY", "1.0"))


async def peer(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The stand-in listener (ASGI): a streamed predict's answer."""
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    await asyncio.sleep(LATENCY)
    await send({"type": "http.response.start", "status": 200,
                "headers": [(b"content-type", b"text/event-stream")]})
    for n in range(CHUNKS):
        data = json.dumps({"text": f"piece {n} "}).encode()
        await send({"type": "http.response.body", "body": b"event: delta\ndata: " + data
                    + b"\n\n", "more_body": True})
    done = json.dumps({"text": "the answer", "usage": {"tokens": 3}}).encode()
    await send({"type": "http.response.body", "body": b"event: done\ndata: " + done + b"\n\n"})


def client_of(url: str, credential: str) -> HttpResources:
    """A run's client as runner.worker makes it (a shared session, or a transport of
    the run's own where the code predates it)."""
    shared = getattr(worker, "loop_session", None)
    if shared is not None:
        return HttpResources(url, credential, timeout=30.0,
                             session=shared(worker._tls_context()))
    import httpx
    transport = httpx.AsyncHTTPTransport(verify=worker._tls_context(),
                                         limits=worker.RUN_HTTP_LIMITS)  # type: ignore[attr-defined]
    return HttpResources(url, credential, timeout=30.0,
                         transport=transport)  # type: ignore[call-arg]


async def one_run(url: str, index: int, calls: int) -> None:
    async def on_delta(_text: str) -> None:
        return None

    resources = client_of(url, f"credential-{index}")
    try:
        for _ in range(calls):
            answer = await resources.predict("slow", [{"role": "user", "content": "hi"}],
                                             on_delta)
            assert answer["text"] == "the answer"
    finally:
        await resources.aclose()


async def round_of(url: str, runs: int, calls: int) -> float:
    began = time.process_time()
    await asyncio.gather(*[one_run(url, i, calls) for i in range(runs)])
    return (time.process_time() - began) * 1000 / (runs * calls)


async def rounds(url: str, args: argparse.Namespace) -> list[float]:
    await round_of(url, 10, 1)  # warm up: imports, TLS context, the loop's session
    figures = [await round_of(url, args.runs, args.calls) for _ in range(args.rounds)]
    close = getattr(worker, "close_loop_session", None)
    if close is not None:
        await close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--calls", type=int, default=4)
    parser.add_argument("--latency", type=float, default=1.0)
    parser.add_argument("--chunks", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    env = {**os.environ, "BENCH_PEER_CHUNKS": str(args.chunks),
           "BENCH_PEER_LATENCY": str(args.latency)}
    server = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "bench.resource_calls:peer", "--port", str(port),
         "--log-level", "warning", "--no-access-log", "--lifespan", "off",
         "--backlog", "4096"], cwd=ROOT, env=env)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        figures = asyncio.run(rounds(f"http://127.0.0.1:{port}/api/v1", args))
        calibration = calibration_ms()
        for figure in figures:
            print(f"cpu_ms_per_call {figure:.3f}  calibration_ms {calibration:.1f}")
        print(json.dumps({"cpu_ms_per_call": round(statistics.median(figures), 3),
                          "calibration_ms": calibration}))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
