"""One agent runtime process under concurrent turns (not a test).

    .venv/bin/python bench/agents.py [--turns 500] [--latency 2.0] [--warmup 50] [--profile FILE]

Starts, on loopback:
- a peers process (uvicorn): an OpenAI-compatible chat completions upstream that
  answers each request after --latency seconds (streamed, with usage) and counts the
  requests it holds at once; and a stand-in for the gateway's internal listener
  (agent-turns open and report, agent-keys/check: always yes) — the figure is the
  runtime's own, not the gateway's;
- the runtime itself, `python -m agents.serve`, serving a verified artifact whose graph
  is input → model (the platform model: the upstream) → output.

Then it sends --warmup turns, reads the runtime's resident memory (VmRSS), sends
--turns turns at once (POST /turns, each with its own connection and key header) and
samples the memory every 20 ms while they are in flight. Figures: `turns` — the most
model calls the upstream held at once (the turns truly concurrent), `errors` — turns not
answered 200 `completed`, `mb_per_turn` — (peak − idle) resident memory / turns,
`added_p99_ms` / `added_p50_ms` — a turn's latency at the caller minus the upstream's.
Targets: 500 turns with no error, ≤ 1 MB per turn, added p99 ≤ 500 ms. The last line is
one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402

from contracts.hashing import content_sha256  # noqa: E402
from contracts.normalize import normalize  # noqa: E402

KEY = "kak_bench-key-0123456789"
TARGETS = {"turns": 500, "mb_per_turn": 1.0, "added_p99_ms": 500.0}


# --- the peers process --------------------------------------------------------------

class Peers:
    """The upstream model server and the gateway's stand-in, as one plain ASGI app."""

    def __init__(self, latency: float) -> None:
        self.latency, self.in_flight, self.most, self.served = latency, 0, 0, 0

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        while (await receive()).get("more_body"):
            pass
        path = scope["path"]
        if path.endswith("/chat/completions"):
            return await self.complete(send)
        if path == "/stats":
            body: Any = {"most_in_flight": self.most, "served": self.served}
            if scope["method"] == "DELETE":
                self.most = self.served = 0
            return await _json(send, 200, body)
        if path.endswith("/agent-turns"):
            return await _json(send, 201, {"turn_id": str(uuid.uuid4()), "status": "running"})
        return await _json(send, 200, {"ok": True})  # reports, key checks

    async def complete(self, send: Any) -> None:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(self.latency)
        finally:
            self.in_flight -= 1
        self.served += 1
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"text/event-stream")]})
        for piece in ("The answer", " is", " 42."):
            chunk = {"choices": [{"index": 0, "delta": {"content": piece}}]}
            await send({"type": "http.response.body", "more_body": True,
                        "body": f"data: {json.dumps(chunk)}\n\n".encode()})
        usage = {"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": 3,
                                          "total_tokens": 8}}
        await send({"type": "http.response.body", "more_body": False,
                    "body": f"data: {json.dumps(usage)}\n\ndata: [DONE]\n\n".encode()})


async def _json(send: Any, status: int, body: Any) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": data})


def serve_peers(port: int, latency: float) -> None:
    import uvicorn

    uvicorn.run(Peers(latency), host="127.0.0.1", port=port, log_level="warning",
                backlog=4096)


# --- the bench ----------------------------------------------------------------------

def artifact() -> dict[str, Any]:
    graph = normalize({"schema_version": 2, "nodes": [
        {"id": "input", "kind": "input"},
        {"id": "ask", "kind": "model", "config": {"model": "llm"}},
        {"id": "output", "kind": "output"}],
        "edges": [{"from": "input", "to": "ask"}, {"from": "ask", "to": "output"}]}).graph
    return {"version": 1, "version_id": str(uuid.uuid4()), "content_sha256":
            content_sha256(graph), "graph": graph, "subflows": [],
            "runtime_module": "agents.native_graph:build_native"}


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_ms(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def wait_up(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{url}: the process exited ({process.returncode})")
        try:
            httpx.get(url, timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise SystemExit(f"{url} did not start")


async def post_turn(port: int, index: int) -> tuple[bool, float]:
    """One turn on its own connection, spoken in plain HTTP/1.1: the load must cost the
    machine little next to what is measured (an httpx pool of hundreds of connections
    spends more CPU than the runtime)."""
    body = json.dumps({"input": f"turn {index}"}).encode()
    started = time.monotonic()
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"POST /turns HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\n"
                     b"Authorization: Bearer " + KEY.encode() + b"\r\nConnection: close\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        await writer.drain()
        answer = await reader.read()
        writer.close()
    except OSError:
        return False, (time.monotonic() - started) * 1000
    head, _, payload = answer.partition(b"\r\n\r\n")
    ok = head[9:12] == b"200" and json.loads(payload).get("status") == "completed"
    return ok, (time.monotonic() - started) * 1000


async def round_of(port: int, turns: int, pid: int | None = None) -> dict[str, Any]:
    peak = [0.0]

    async def sample() -> None:
        while pid is not None:
            peak[0] = max(peak[0], rss_mb(pid))
            await asyncio.sleep(0.02)

    sampler = asyncio.create_task(sample())
    results = await asyncio.gather(*(post_turn(port, i) for i in range(turns)))
    sampler.cancel()
    latencies = sorted(ms for _, ms in results)
    return {"errors": sum(1 for ok, _ in results if not ok), "latencies": latencies,
            "peak_mb": peak[0]}


def profiler(pid: int, out: Path) -> subprocess.Popen[bytes]:
    """py-spy sampling the runtime (its CPU then counts the sampler's pauses too)."""
    return subprocess.Popen([str(Path(sys.executable).parent / "py-spy"), "record", "--pid",
                             str(pid), "--format", "raw", "--rate", "250", "-o", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def percentile(values: list[float], share: float) -> float:
    return values[min(len(values) - 1, int(share * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--latency", type=float, default=2.0)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--profile", type=Path, default=None,
                        help="py-spy the runtime during the measured turns: its raw stacks here")
    parser.add_argument("--serve-peers", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_peers:
        return serve_peers(args.serve_peers, args.latency)

    peers_port, runtime_port = free_port(), free_port()
    peers_url, url = f"http://127.0.0.1:{peers_port}", f"http://127.0.0.1:{runtime_port}"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "artifact.json"
        path.write_text(json.dumps(artifact()))
        env = {**os.environ, "KIONGA_AGENT_ARTIFACT": str(path),
               "KIONGA_AGENT_CREDENTIAL": "kag_bench", "KIONGA_AGENT_PORT": str(runtime_port),
               "KIONGA_AGENT_GATEWAY_URL": f"{peers_url}/api/v1",
               "MLAIOPS_LLM_BACKEND": "openai", "MLAIOPS_LLM_MODEL": "bench",
               "MLAIOPS_LLM_BASE_URL": f"{peers_url}/v1"}
        quiet = subprocess.DEVNULL
        peers = subprocess.Popen([sys.executable, __file__, "--serve-peers", str(peers_port),
                                  "--latency", str(args.latency)], cwd=ROOT, stdout=quiet,
                                 stderr=quiet)
        runtime = subprocess.Popen([sys.executable, "-m", "agents.serve"], cwd=ROOT, env=env,
                                   stdout=quiet, stderr=quiet)
        try:
            wait_up(f"{peers_url}/stats", peers)
            wait_up(f"{url}/healthz", runtime)
            started = time.monotonic()
            warm = asyncio.run(round_of(runtime_port, args.warmup))
            idle = rss_mb(runtime.pid)
            httpx.delete(f"{peers_url}/stats")
            cpu_before, peers_before = cpu_ms(runtime.pid), cpu_ms(peers.pid)
            own_before = time.process_time()
            spy = profiler(runtime.pid, args.profile) if args.profile else None
            measured = asyncio.run(round_of(runtime_port, args.turns, runtime.pid))
            if spy is not None:
                spy.send_signal(signal.SIGINT)  # py-spy writes its file when interrupted
                spy.wait(timeout=60)
            cpu = cpu_ms(runtime.pid) - cpu_before
            peers_cpu = cpu_ms(peers.pid) - peers_before
            own_cpu = (time.process_time() - own_before) * 1000
            stats = httpx.get(f"{peers_url}/stats").json()
            wall = time.monotonic() - started
        finally:
            for process in (runtime, peers):
                process.terminate()
                process.wait(timeout=30)
    upstream_ms = args.latency * 1000
    added = [ms - upstream_ms for ms in measured["latencies"]]
    result = {
        "turns": stats["most_in_flight"], "requested": args.turns,
        "errors": measured["errors"] + warm["errors"],
        "mb_per_turn": round((measured["peak_mb"] - idle) / max(1, args.turns), 3),
        "added_p99_ms": round(percentile(added, 0.99), 1),
        "added_p50_ms": round(percentile(added, 0.50), 1),
        "runtime_cpu_ms_per_turn": round(cpu / max(1, args.turns), 2),
        "peers_cpu_ms_per_turn": round(peers_cpu / max(1, args.turns), 2),
        "client_cpu_ms_per_turn": round(own_cpu / max(1, args.turns), 2),
        "upstream_latency_ms": upstream_ms, "rss_idle_mb": round(idle, 1),
        "rss_peak_mb": round(measured["peak_mb"], 1), "wall_s": round(wall, 1),
    }
    print(f"{result['turns']} turns at once ({args.turns} sent), {result['errors']} errors; "
          f"resident {result['rss_idle_mb']} MB idle, {result['rss_peak_mb']} MB at the peak: "
          f"{result['mb_per_turn']} MB per turn; added latency p50 {result['added_p50_ms']} "
          f"ms, p99 {result['added_p99_ms']} ms (upstream {upstream_ms:.0f} ms)")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
