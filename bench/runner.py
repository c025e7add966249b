"""The runner alone (not a test): signed tasks in, terminal events out, 8 in flight.

    .venv/bin/python bench/runner.py [--runs N] [--rounds N]

Starts one real runner worker (Celery, mock model) on the local Redis (db 5), sends
mock runs as the gateway does (a slot first), prints the median runs/s over the
rounds and, as its last line, {"runner_runs_per_s": ...}. The end-to-end figure with
the gateway is bench/runs.py's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import redis  # noqa: E402

from bench.cpu import CpuMeter, group  # noqa: E402
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--pool", default="prefork", help="the worker's pool (--pool)")
    args = parser.parse_args()
    rds = redis.Redis.from_url(REDIS_URL)
    app = client_app()
    worker = Worker(Path(tempfile.mkdtemp()) / "worker.log", "--pool", args.pool)
    try:
        worker.wait_ready()
        graph = mock_graph()
        read_run(rds, send(app, rds, payload(graph)))  # warm up
        rates = []
        meter = CpuMeter({"runner": group(worker.proc.pid)})
        for _ in range(args.rounds):
            started = time.monotonic()
            ended = run_many(rds, app, graph, args.runs)
            assert ended == {"run.completed": args.runs}, ended
            rates.append(args.runs / (time.monotonic() - started))
        cpu_ms = meter.spent()["runner"] / (args.runs * args.rounds)
    finally:
        worker.stop()
    median = statistics.median(rates)
    print(f"runner alone ({args.pool}): median {median:.0f} runs/s over {args.rounds} rounds "
          f"({', '.join(f'{r:.0f}' for r in rates)}), 8 in flight, mock 3-node graph, "
          f"{cpu_ms:.2f} CPU ms per run")
    print(json.dumps({"runner_runs_per_s": round(median, 1),
                      "runner_cpu_ms_per_run": round(cpu_ms, 2)}))


if __name__ == "__main__":
    main()
