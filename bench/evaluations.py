"""End-to-end evaluation benchmark (not a test): starts the real stack, measures, stops it.

    .venv/bin/python bench/evaluations.py [--cases N] [--repeat N] [--throughput-runs N]

KIONGA_BENCH_DB names its database (default kionga_bench_evaluations).

An evaluation of N calls-only cases (default 50) on a 3-node mock graph, each case an
ordinary run on the Celery runner, driven by the gateway's worker from run endings.
Measured in the same run: the runs benchmark's sustained throughput (bench/runs.py,
8 concurrent clients starting and following runs), so the figure is a ratio (target:
an evaluation case costs about one run, ≥ 0.8×). As in bench/runs.py the project's
share is the whole runner (8 slots), so the cases run 8 at a time as the clients' runs
do. An evaluation's duration is the server's (created to finished), not the client's
poll's. The last line is one JSON object.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.stack import Stack  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_runs", ROOT / "bench" / "runs.py")
assert _spec is not None and _spec.loader is not None
bench_runs: Any = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_runs)
# A database of its own: helpers may run bench/runs.py (kionga_bench) meanwhile
# (KIONGA_BENCH_DB names another, for two of these at once).
bench_runs.DB_NAME = os.environ.get("KIONGA_BENCH_DB", "kionga_bench_evaluations")


@dataclass(frozen=True)
class Timed:
    """An evaluation's duration by the server's clock (created to finished: what the
    figure is) and as the client saw it (POST to the poll that found it ended: up to a
    poll interval more)."""

    server: float
    seen: float
    result: dict[str, Any]


def evaluate_once(http: httpx.Client, design_id: str) -> Timed:
    start = time.perf_counter()
    response = http.post(f"/api/v1/agent-designs/{design_id}/evaluations", json={"gate": True})
    assert response.status_code == 201, response.text
    url = f"/api/v1/agent-evaluations/{response.json()['id']}"
    while True:
        got = http.get(url).json()
        if got["status"] not in ("queued", "running"):
            seen = time.perf_counter() - start
            server = (datetime.fromisoformat(got["finished_at"])
                      - datetime.fromisoformat(got["created_at"])).total_seconds()
            return Timed(server, seen, got)
        # A progress bar's pace; faster polls only take the gateway's CPU. 50 cases take
        # about half a second: the duration is the server's, not this poll's.
        time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cases", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--throughput-runs", type=int, default=200)
    args = parser.parse_args()
    stack = Stack(database_url=f"{bench_runs.PG}/{bench_runs.DB_NAME}",
                  log_dir=ROOT / "var" / "bench-logs", gateway_workers=2)
    # The runs' figure is 8 clients in 8 slots (bench/runs.py's setting): the evaluation
    # runs its cases at the same share, so a case is compared with a run at the same
    # concurrency (at half the share the cases wait on their round trips, 4 at a time,
    # while the 8 clients' retries keep every slot busy).
    bench_runs.one_tenant(stack)
    env = {**os.environ, **stack.env()}
    bench_runs.fresh_database(env)
    project_id, token = bench_runs.bootstrap(env)
    try:
        stack.start()  # inside: a stack that never became ready is stopped too
        client = bench_runs.Client(stack, token)
        design_id = client.http.post("/api/v1/agent-designs", json={
            "project_id": project_id, "name": "bench", "graph": bench_runs.GRAPH}).json()["id"]
        cases = [{"name": f"case {i}", "input": f"case {i}",
                  "expected": {"calls": ["model", "output"]}} for i in range(args.cases)]
        put = client.http.put(f"/api/v1/agent-designs/{design_id}/fixtures",
                              json={"revision": 0, "cases": cases})
        assert put.status_code == 200, put.text
        for i in range(20):  # warm up every process and connection
            client.run_once(design_id, f"warm {i}")
        evaluate_once(client.http, design_id)  # and the gateway's worker
        runs_rate = bench_runs.throughput(stack, token, design_id, args.throughput_runs, 8)
        rates, seen = [], []
        for _ in range(args.repeat):
            timed = evaluate_once(client.http, design_id)
            assert timed.result["passed"] is True, timed.result["counts"]
            rates.append(args.cases / timed.server)
            seen.append(args.cases / timed.seen)
    finally:
        stack.stop()
    rate = statistics.median(rates)
    figures = {"eval_cases_per_s": round(rate, 1), "runs_per_s": round(runs_rate, 1),
               "eval_vs_runs_ratio": round(rate / runs_rate, 2),
               "eval_seen_cases_per_s": round(statistics.median(seen), 1)}
    print(f"evaluation of {args.cases} calls-only cases  median {figures['eval_cases_per_s']} "
          f"cases/s over {args.repeat} ({', '.join(f'{r:.1f}' for r in rates)}; "
          f"created to finished by the server's clock)")
    print(f"as the client saw it (0.2 s polls)   {figures['eval_seen_cases_per_s']} cases/s "
          f"({', '.join(f'{r:.1f}' for r in seen)})")
    print(f"runs throughput (8 clients)          {figures['runs_per_s']} runs/s")
    print(f"ratio                                {figures['eval_vs_runs_ratio']}× "
          "(target ≥ 0.8×)")
    print(json.dumps({"eval_cases_per_s": figures["eval_cases_per_s"],
                      "eval_vs_runs_ratio": figures["eval_vs_runs_ratio"],
                      "eval_seen_cases_per_s": figures["eval_seen_cases_per_s"],
                      "runs_per_s": figures["runs_per_s"]}))


if __name__ == "__main__":
    main()
