"""End-to-end run benchmark (not a test): starts the real stack, measures, stops it.

    .venv/bin/python bench/runs.py [--runs N] [--throughput-runs N]

Uses the local PostgreSQL (a fresh `kionga_bench` database) and starts its own
Redis, gateway (uvicorn), internal listener, event ingester and runner (Celery),
exactly as the Procfile does. Figures, each with the floor measured in the same run:
- POST → run.completed seen on SSE for a 3-node mock graph (median, p99), against a
  no-op Celery task round trip (target: median ≤ 4× that round trip, p99 ≤ 25 ms);
- event latency from the runner's timestamp to an SSE client that was listening
  (the events of runs after a person approves them: resolved, model deltas,
  completions; median, p99; targets 5 ms and 20 ms), against a Redis PUBLISH →
  subscriber;
- sustained throughput of mock runs through one runner with 8 concurrent clients
  (target ≥ 120 runs/s), with the CPU milliseconds per run of each process (gateway,
  internal listener, runner, ingester, Redis, the PostgreSQL backends of the bench
  database, this client; from /proc/<pid>/stat) in `cpu_ms_per_run`;
- the same for the combined route (POST …/runs with Accept: text/event-stream, one
  request per run): latency, throughput and `combined_cpu_ms_per_run`.
Before each throughput, `cpu_calibration_ms` times a fixed piece of Python work
(bench.cpu.calibration_ms): this VM's core speed moves between minutes, and the
CPU figures of two runs compare only at similar calibrations.
Clients read every stream to its end over kept-alive connections (a fair client;
bench/http_client.py, light enough not to take the stack's CPU).
KIONGA_BENCH_DB names the database (one per concurrent bench); --profile DIR records
py-spy stacks of the stack's processes during the throughput of --route (one: the
combined route, the default; two: start, then the events).
The last line is one JSON object of the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import redis

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import stack_setup  # noqa: E402
from bench.cpu import (  # noqa: E402
    CpuMeter,
    calibration_ms,
    group,
    postgres_backends,
    this_process,
)
from bench.http_client import Connection, lines  # noqa: E402
from bench.stack_setup import PG, pct  # noqa: E402
from tests.stack import VENV_BIN, Stack  # noqa: E402

DB_NAME = os.environ.get("KIONGA_BENCH_DB", "kionga_bench")  # one per concurrent bench
LATENCY_RUNS = 20
# Starts refused with 429 (runner at capacity) and tried again, in all.
REFUSED = [0]
GRAPH = {
    "schema_version": 2,
    "nodes": [{"id": "input", "kind": "input"},
              {"id": "model", "kind": "model", "config": {"model": "llm"}},
              {"id": "output", "kind": "output"}],
    "edges": [{"from": "input", "to": "model"}, {"from": "model", "to": "output"}],
}


APPROVAL_GRAPH = {
    "schema_version": 2,
    "nodes": [{"id": "input", "kind": "input"},
              {"id": "gate", "kind": "approval", "config": {"message": "Go?"}},
              {"id": "model", "kind": "model", "config": {"model": "llm"}},
              {"id": "output", "kind": "output"}],
    "edges": [{"from": "input", "to": "gate"},
              {"from": "gate", "to": "model", "from_port": "approved"},
              {"from": "model", "to": "output"}],
    "settings": {"timeout_seconds": 300},
}


def fresh_database(env: dict[str, str]) -> None:
    stack_setup.fresh_database(env, DB_NAME)


def bootstrap(env: dict[str, str]) -> tuple[int, str]:
    return stack_setup.bootstrap(env, "bench", "bench")


def celery_floor(stack: Stack, samples: int) -> list[float]:
    env = {**stack.env(), "PYTHONPATH": str(ROOT / "bench")}
    env.pop("DJANGO_SETTINGS_MODULE")  # a plain Celery app: no Django fix-up
    worker = subprocess.Popen(
        [str(VENV_BIN / "celery"), "-A", "floor_celery", "worker", "-Q", "floor",
         "--concurrency", "1", "--loglevel", "WARNING", "--without-gossip", "--without-mingle",
         "--without-heartbeat", "-n", "floor@%h"],
        cwd=ROOT / "bench", env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        os.environ["REDIS_URL"] = stack.redis_url
        sys.path.insert(0, str(ROOT / "bench"))
        from floor_celery import noop  # type: ignore[import-not-found]

        noop.delay().get(timeout=30)  # warm up (and wait for the worker)
        times = []
        for _ in range(samples):
            start = time.perf_counter()
            noop.delay().get(timeout=10)
            times.append((time.perf_counter() - start) * 1000)
        return times
    finally:
        worker.terminate()
        worker.wait()


def publish_floor(stack: Stack, samples: int) -> list[float]:
    client = redis.Redis.from_url(stack.redis_url)
    pubsub = client.pubsub()
    pubsub.subscribe("floor")
    pubsub.get_message(timeout=1)
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        client.publish("floor", b"x")
        while pubsub.get_message(timeout=1) is None:
            pass
        times.append((time.perf_counter() - start) * 1000)
    return times


def _read_events(lines: Any) -> list[tuple[dict[str, Any], float]]:
    """The run's events (deltas included, not the combined route's `run` frame), each
    with its arrival time; reads the stream to its end, as a fair client does, so
    the kept-alive connection serves the next request."""
    got = []
    kind = ""
    for line in lines:
        if line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: ") and kind != "run":
            got.append((json.loads(line[6:]), time.time()))
    return got


class Client:
    """httpx for the set-up and the approvals; the measured requests (start, follow,
    start and follow) on bench.http_client's lighter kept-alive connection."""

    def __init__(self, stack: Stack, token: str) -> None:
        self.http = httpx.Client(base_url=stack.base_url, timeout=60,
                                 headers={"Authorization": f"Bearer {token}"})
        self.conn = Connection(stack.base_url, token)

    def start(self, design_id: str, text: str) -> tuple[int, Any]:
        return self.conn.json("POST", f"/api/v1/agent-designs/{design_id}/runs",
                              {"input": text})

    def follow(self, design_id: str, run_id: str) -> tuple[list[tuple[dict[str, Any], float]],
                                                          float]:
        """Events (deltas included) as they arrive on SSE, each with its arrival time
        (epoch s), and the time the stream was open."""
        url = f"/api/v1/agent-designs/{design_id}/runs/{run_id}/events"
        response = self.conn.send("GET", url, accept="text/event-stream")
        assert response.status == 200, response.read()
        opened = time.time()
        return _read_events(lines(response)), opened

    def start_and_follow(self, design_id: str, text: str) -> tuple[float, list[float]]:
        """run_once through the combined route: POST …/runs with Accept:
        text/event-stream, read to the stream's end (the connection is kept alive)."""
        url = f"/api/v1/agent-designs/{design_id}/runs"
        while True:
            start = time.perf_counter()
            response = self.conn.send("POST", url, {"input": text}, accept="text/event-stream")
            if response.status == 429:  # at capacity: try again
                REFUSED[0] += 1
                response.read()
                time.sleep(0.002)
                continue
            assert response.status == 201, response.read()
            opened = time.time()
            events = _read_events(lines(response))
            break
        total = (time.perf_counter() - start) * 1000
        assert events and events[-1][0]["type"] == "run.completed", events[-1:]
        lags = [(arrived - at) * 1000 for at, arrived in
                ((datetime.fromisoformat(e["at"]).timestamp(), a) for e, a in events)
                if at >= opened]
        return total, lags

    def approved_run_lags(self, design_id: str, text: str) -> list[float]:
        """Latencies (ms) of the events a run produces after a person approves it, read
        by a client that was listening all along: the runner's own pace, not a backlog."""
        run_id = self.start(design_id, text)[1]["id"]
        url = f"/api/v1/agent-designs/{design_id}/runs/{run_id}/events"
        lags: list[float] = []
        decided = float("inf")
        with self.http.stream("GET", url, headers={"Accept": "text/event-stream"}) as response:
            for line in response.iter_lines():
                if not line.startswith("data: "):
                    continue
                event, arrived = json.loads(line[6:]), time.time()
                at = datetime.fromisoformat(event["at"]).timestamp()
                if at >= decided:
                    lags.append((arrived - at) * 1000)
                if event["type"] == "approval.requested":
                    decided = time.time()
                    self.http.post(f"/api/v1/agent-approvals/{event['approval_id']}/decision",
                                   json={"decision": "approve"})
        return lags  # read to the stream's end (it closes after the terminal event)

    def run_once(self, design_id: str, text: str) -> tuple[float, list[float]]:
        """(ms from POST to run.completed on SSE, latencies in ms of the events the runner
        produced while the stream was open)."""
        start = time.perf_counter()
        status, body = self.start(design_id, text)
        while status == 429:  # at capacity: try again, as a client would
            REFUSED[0] += 1
            time.sleep(0.002)
            start = time.perf_counter()
            status, body = self.start(design_id, text)
        assert status == 201, body
        events, opened = self.follow(design_id, body["id"])
        total = (time.perf_counter() - start) * 1000
        assert events and events[-1][0]["type"] == "run.completed", events[-1:]
        produced = [(datetime.fromisoformat(e["at"]).timestamp(), arrived)
                    for e, arrived in events]
        # Events produced before the client connected were waiting for it: not latency.
        lags = [(arrived - at) * 1000 for at, arrived in produced if at >= opened]
        return total, lags


def throughput(stack: Stack, token: str, design_id: str, runs: int, workers: int,
               combined: bool = False) -> float:
    done = [0]
    lock = threading.Lock()
    per_worker = runs // workers

    def work() -> None:
        client = Client(stack, token)
        for i in range(per_worker):
            if combined:
                client.start_and_follow(design_id, f"throughput {i}")
            else:
                client.run_once(design_id, f"throughput {i}")
            with lock:
                done[0] += 1

    threads = [threading.Thread(target=work) for _ in range(workers)]
    start = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done[0] / (time.perf_counter() - start)


def profilers(stack: Stack, out: Path) -> list[subprocess.Popen[bytes]]:
    """py-spy on the stack's Python processes, samples that hold the GIL only (a thread
    waiting on a socket or a lock is not CPU), as raw stacks in `out`/<name>.txt."""
    out.mkdir(parents=True, exist_ok=True)
    return [subprocess.Popen([str(VENV_BIN / "py-spy"), "record", "--pid",
                              str(stack.processes[name].pid), "--subprocesses", "--gil",
                              "--format", "raw",
                              "--rate", "200", "-o", str(out / f"{name}.txt")],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            for name in ("gateway", "internal", "runner", "events")]


def stop_profilers(spies: list[subprocess.Popen[bytes]]) -> None:
    for spy in spies:
        spy.send_signal(signal.SIGINT)
        spy.wait()


def cpu_meter(stack: Stack) -> CpuMeter:
    """CPU of every process of the stack (process groups), of PostgreSQL's backends
    serving the bench database, and of this client."""
    sources = {name: group(stack.processes[name].pid)
               for name in ("gateway", "internal", "runner", "events", "redis")}
    return CpuMeter({**sources, "postgres": postgres_backends(DB_NAME),
                     "client": this_process()})


def one_tenant(stack: Stack) -> None:
    """The bench's one project gets the whole runner as its share (the stack's processes
    inherit this process's environment): 8 clients fit in its 8 slots; with the default
    half share, half the clients would only measure 429 answers."""
    os.environ["KIONGA_PROJECT_MAX_RUNS"] = str(stack.max_runs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--throughput-runs", type=int, default=400)
    parser.add_argument("--gateway-workers", type=int, default=2)
    parser.add_argument("--route", choices=("one", "two"), default="one",
                        help="the throughput --profile records: one request per run "
                             "(start and follow) or two (start, then the events)")
    parser.add_argument("--profile", type=Path, default=None,
                        help="py-spy the stack during the throughput of --route")
    args = parser.parse_args()
    stack = Stack(database_url=f"{PG}/{DB_NAME}", log_dir=ROOT / "var" / "bench-logs",
                  gateway_workers=args.gateway_workers)
    one_tenant(stack)
    env = {**os.environ, **stack.env()}
    fresh_database(env)
    project_id, token = bootstrap(env)
    stack.start()
    try:
        client = Client(stack, token)
        created = client.http.post("/api/v1/agent-designs", json={
            "project_id": project_id, "name": "bench", "graph": GRAPH})
        design_id = created.json()["id"]
        for i in range(20):  # warm up every process and connection
            client.run_once(design_id, f"warm {i}")
        celery = celery_floor(stack, args.runs)
        publish = publish_floor(stack, args.runs)
        totals, lags, combined_totals = [], [], []
        for i in range(args.runs):
            totals.append(client.run_once(design_id, f"hello {i}")[0])
        for i in range(args.runs):
            combined_totals.append(client.start_and_follow(design_id, f"hello {i}")[0])
        gated = client.http.post("/api/v1/agent-designs", json={
            "project_id": project_id, "name": "bench approval", "graph": APPROVAL_GRAPH})
        for i in range(LATENCY_RUNS):
            lags += client.approved_run_lags(gated.json()["id"], f"one two three {i}")
        calibration = calibration_ms()
        meter, REFUSED[0] = cpu_meter(stack), 0
        spies = profilers(stack, args.profile) if args.profile and args.route == "two" else []
        rate = throughput(stack, token, design_id, args.throughput_runs, 8)
        stop_profilers(spies)
        refused = REFUSED[0]
        cpu = {name: round(ms / args.throughput_runs, 2) for name, ms in meter.spent().items()}
        combined_calibration = calibration_ms()
        meter, REFUSED[0] = cpu_meter(stack), 0
        spies = profilers(stack, args.profile) if args.profile and args.route == "one" else []
        combined_rate = throughput(stack, token, design_id, args.throughput_runs, 8,
                                   combined=True)
        stop_profilers(spies)
        combined_refused = REFUSED[0]
        combined_cpu = {name: round(ms / args.throughput_runs, 2)
                        for name, ms in meter.spent().items()}
    finally:
        stack.stop()
    figures: dict[str, Any] = report(totals, lags, celery, publish, rate)
    cpu["total"] = round(sum(cpu.values()), 2)
    combined_cpu["total"] = round(sum(combined_cpu.values()), 2)
    celery_p50 = figures["celery_roundtrip_p50_ms"]
    figures.update(run_e2e_combined_p50_ms=round(statistics.median(combined_totals), 2),
                   run_e2e_combined_p99_ms=round(pct(combined_totals, 0.99), 2),
                   combined_runs_per_s=round(combined_rate, 1))
    print(f"CPU ms per run         {cpu}")
    print(f"start+stream in one    median {figures['run_e2e_combined_p50_ms']} ms, p99 "
          f"{figures['run_e2e_combined_p99_ms']} ms = "
          f"{figures['run_e2e_combined_p50_ms'] / celery_p50:.1f}× the Celery round trip; "
          f"{figures['combined_runs_per_s']} runs/s; CPU ms per run {combined_cpu}")
    print(f"429s tried again       {refused} (two requests), {combined_refused} (one request)")
    print(f"CPU speed              a fixed piece of Python work took {calibration} ms before the "
          f"two-request throughput, {combined_calibration} ms before the one-request one")
    figures.update(refused_429=refused, combined_refused_429=combined_refused,
                   cpu_calibration_ms=calibration,
                   combined_cpu_calibration_ms=combined_calibration)
    figures["combined_cpu_ms_per_run"] = combined_cpu
    figures["cpu_ms_per_run"] = cpu
    print(json.dumps(figures))


def report(totals: list[float], lags: list[float], celery: list[float],
           publish: list[float], rate: float) -> dict[str, float]:
    celery_p50 = statistics.median(celery)
    publish_p50 = statistics.median(publish)
    figures = {
        "run_e2e_p50_ms": round(statistics.median(totals), 2),
        "run_e2e_p99_ms": round(pct(totals, 0.99), 2),
        "celery_roundtrip_p50_ms": round(celery_p50, 2),
        "sse_latency_p50_ms": round(statistics.median(lags), 2),
        "sse_latency_p99_ms": round(pct(lags, 0.99), 2),
        "runs_per_s": round(rate, 1),
    }
    print(f"POST → run.completed   median {figures['run_e2e_p50_ms']} ms, p99 "
          f"{figures['run_e2e_p99_ms']} ms = {figures['run_e2e_p50_ms'] / celery_p50:.1f}× "
          f"the no-op Celery round trip ({celery_p50:.2f} ms; target ≤ 4×, p99 ≤ 25 ms)")
    sse_ratio = figures["sse_latency_p50_ms"] / publish_p50
    print(f"runner → SSE latency   median {figures['sse_latency_p50_ms']} ms, p99 "
          f"{figures['sse_latency_p99_ms']} ms = {sse_ratio:.1f}× "
          f"a Redis PUBLISH → subscriber ({publish_p50:.3f} ms; targets 5 ms / 20 ms)")
    print(f"throughput             {figures['runs_per_s']} runs/s with 8 concurrent clients "
          f"(target ≥ 120; n8n publishes 220/s)")
    return figures


if __name__ == "__main__":
    main()
