"""The runner alone's CPU per run, split by thread (not a test).

    .venv/bin/python bench/runner_threads.py [--runs N] [--rounds N]

bench/runner.py's load (one real runner worker, mock runs, 8 in flight) with each
thread's CPU read from /proc/<pid>/task around the measured rounds: the Celery parent
(`parent`) and, summed over the pool processes, each child's Celery thread (`main`:
receive, trace, the task's check and claim), event loop (`loop`), watchdog, keeper
and sink writers, in the order runner.host and runner.sink start them. Last line one
JSON object: calibration, runs/s, CPU ms per run in all and by thread.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from bench.cpu import TICK_MS, calibration_ms  # noqa: E402
from tests.runner_process.runner_kit import (  # noqa: E402
    REDIS_URL,
    Worker,
    client_app,
    mock_graph,
    payload,
    read_run,
    send,
)
from tests.runner_process.runner_load import run_many  # noqa: E402

# A pool child's threads in the order they start: its own, the host's loop, watchdog
# and keeper (runner.host), then the sink writers (runner.sink).
ROLES = ("main", "loop", "watchdog", "keeper")


def thread_cpu(root: int) -> dict[str, float]:
    """CPU ms so far of the worker's threads by role."""
    out: dict[str, float] = {}
    children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(root)], capture_output=True,
                              text=True, check=False).stdout.split()
    for pid in [str(root), *children]:
        try:
            tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
        except OSError:
            continue
        for index, tid in enumerate(tids):
            try:
                raw = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
            except OSError:
                continue
            fields = raw[raw.rindex(")") + 2:].split()
            role = ("parent" if pid == str(root)
                    else ROLES[index] if index < len(ROLES) else "writers")
            out[role] = out.get(role, 0.0) + (int(fields[11]) + int(fields[12])) * TICK_MS
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rds = redis.Redis.from_url(REDIS_URL)
    app = client_app()
    worker = Worker(Path(tempfile.mkdtemp()) / "worker.log")
    try:
        worker.wait_ready()
        graph = mock_graph()
        for _ in range(3):
            read_run(rds, send(app, rds, payload(graph)))  # warm up every process
        run_many(rds, app, graph, 16)
        calibration = calibration_ms()
        before, started = thread_cpu(worker.proc.pid), time.monotonic()
        for _ in range(args.rounds):
            ended = run_many(rds, app, graph, args.runs)
            assert ended == {"run.completed": args.runs}, ended
        elapsed, after = time.monotonic() - started, thread_cpu(worker.proc.pid)
    finally:
        worker.stop()
    runs = args.runs * args.rounds
    per_run = {role: round((after[role] - before.get(role, 0.0)) / runs, 3)
               for role in sorted(after)}
    print(json.dumps({"calibration_ms": calibration, "runs_per_s": round(runs / elapsed, 1),
                      "cpu_ms_per_run": round(sum(per_run.values()), 2), **per_run}))


if __name__ == "__main__":
    main()
