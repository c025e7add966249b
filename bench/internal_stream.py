"""The internal listener's CPU per streamed model call (not a test).

    .venv/bin/python bench/internal_stream.py [--calls N] [--in-flight F] [--latency S]
        [--chunks K] [--rounds R] [--trees DIR ...]

The listener as the Procfile starts it (uvicorn kionga.internal_asgi with the bounded
protocol; a process of its own), tests/slow_upstream.py as the model (another), and
this process as the runner: F streamed predicts in flight at once with a run
credential each, until N are done, every answer read to its end. Prints, per round,
the listener's CPU ms per call (from /proc: its threads included) with
bench.cpu.calibration_ms(). With several --trees (e.g. a checkout of main and this
worktree) the rounds alternate between their listeners, A/B/A/B, in the same minutes.
Needs the environment of the preamble; its database is KIONGA_BENCH_DB (made and
migrated when absent).
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

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.cpu import calibration_ms, pid_cpu_ms  # noqa: E402
from bench.stack_setup import PG, fresh_database  # noqa: E402

DB_NAME = os.environ.get("KIONGA_BENCH_DB", "kionga_bench_internal_stream")
SECRET = "sk-bench-0123456789abcdef"


def env_of() -> dict[str, str]:
    return {**os.environ, "DATABASE_URL": f"{PG}/{DB_NAME}",
            "DJANGO_SETTINGS_MODULE": "kionga.settings", "KIONGA_EGRESS_ALLOW": "127.0.0.1"}


def database_ready(env: dict[str, str]) -> None:
    listed = subprocess.run(["psql", "-h", "127.0.0.1", "-U", "postgres", "-Atc",
                             f"SELECT 1 FROM pg_database WHERE datname = '{DB_NAME}'"],
                            capture_output=True, text=True, check=True).stdout.strip()
    if listed != "1":
        fresh_database(env, DB_NAME)


def runs_with_credentials(env: dict[str, str], upstream: str, count: int) -> list[str]:
    """A project with model `slow` on the upstream, and `count` running runs: their
    credentials (each run holds a capacity slot, as a run in flight does)."""
    code = f"""
import json, uuid
from django.contrib.auth.models import User
from kionga.models import Membership, Project
from kionga.redis_client import sync_redis
from kionga.resource_models import ModelEndpoint
from runner import protocol
from runs.credentials import issue_credential
from runs.models import Run
user = User.objects.create(username=f"bench-{{uuid.uuid4().hex[:8]}}")
tag = uuid.uuid4().hex[:8]
project = Project.objects.create(name=f"bench-{{tag}}", slug=f"bench-{{tag}}")
Membership.objects.create(project=project, user=user, role="admin")
ModelEndpoint.objects.create(project=project, key="slow", base_url={upstream!r},
                             model_name="slow", secret={SECRET!r})
out = []
for _ in range({count}):
    run = Run.objects.create(project=project, created_by=user, content_sha256="0" * 64,
                             status="running", resources={{"model": ["slow"]}})
    protocol.acquire_slot(sync_redis(), str(run.pk), 1_000_000, 3600.0)
    out.append(issue_credential(run))
print(json.dumps(out))
"""
    out = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=env,
                         check=True, capture_output=True, text=True).stdout
    return list(json.loads(out.strip().splitlines()[-1]))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_upstream(latency: float, chunks: int) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.slow_upstream", "--port", "0", "--latency",
         str(latency), "--chunks", str(chunks)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url.startswith("http"):
        raise RuntimeError(f"the slow upstream did not start: {url!r}")
    return process, url


def start_listener(tree: Path, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "uvicorn", "kionga.internal_asgi:application", "--lifespan",
         "on", "--no-proxy-headers", "--http", "kionga.http_protocol:BoundedHttpToolsProtocol",
         "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
         "--no-access-log"], cwd=tree, env=env)
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process, f"http://127.0.0.1:{port}/api/v1"
        except OSError:
            if time.monotonic() > deadline or process.poll() is not None:
                raise RuntimeError(f"the listener of {tree} did not start") from None
            time.sleep(0.2)


async def one_call(session: aiohttp.ClientSession, url: str, credential: str) -> None:
    async with session.post(
            f"{url}/models/slow/predict",
            json={"messages": [{"role": "user", "content": "hello there"}]},
            headers={"Authorization": f"Bearer {credential}",
                     "Accept": "text/event-stream, application/json"}) as response:
        body = await response.read()
        if response.status != 200 or b"event: done" not in body:
            raise RuntimeError(f"{response.status}: {body[:300]!r}")


async def round_of(url: str, pid: int, credentials: list[str], calls: int,
                   in_flight: int) -> float:
    connector = aiohttp.TCPConnector(limit=in_flight)
    async with aiohttp.ClientSession(connector=connector) as session:
        await asyncio.gather(*[one_call(session, url, c) for c in credentials[:20]])  # warm
        queue = list(range(calls))
        before = pid_cpu_ms(pid)

        async def worker(n: int) -> None:
            while queue:
                queue.pop()
                await one_call(session, url, credentials[n % len(credentials)])

        await asyncio.gather(*[worker(n) for n in range(in_flight)])
        return (pid_cpu_ms(pid) - before) / calls


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=600)
    parser.add_argument("--in-flight", type=int, default=200)
    parser.add_argument("--latency", type=float, default=2.0)
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--trees", nargs="*", default=[str(ROOT)])
    args = parser.parse_args()
    env = env_of()
    database_ready(env)
    upstream, upstream_url = start_upstream(args.latency, args.chunks)
    listeners: list[tuple[str, subprocess.Popen[bytes], str]] = []
    try:
        credentials = runs_with_credentials(env, upstream_url, args.in_flight)
        for tree in args.trees:
            process, url = start_listener(Path(tree), env)
            listeners.append((tree, process, url))
        figures: dict[str, list[tuple[float, float]]] = {tree: [] for tree in args.trees}
        for _ in range(args.rounds):
            for tree, process, url in listeners:
                ms = asyncio.run(round_of(url, process.pid, credentials, args.calls,
                                          args.in_flight))
                calibration = calibration_ms()
                figures[tree].append((ms, calibration))
                print(f"{tree}: cpu_ms_per_call {ms:.3f}  calibration_ms {calibration:.1f}",
                      flush=True)
        print(json.dumps({tree: {"cpu_ms_per_call": round(statistics.median(
            ms for ms, _ in rows), 3), "calibration_ms": round(statistics.median(
                c for _, c in rows), 1)} for tree, rows in figures.items()}))
    finally:
        for _, process, _ in listeners:
            process.terminate()
            process.wait()
        upstream.terminate()
        upstream.wait()


if __name__ == "__main__":
    main()
