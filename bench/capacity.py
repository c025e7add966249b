"""Benchmark of waiting work (not a test): starts the real stack at its default settings,
measures, stops it.

    .venv/bin/python bench/capacity.py [--runs N] [--latency S] [--chunks C] [--sample K]
        [--rounds R] [--ramp S] [--approvals N] [--eval-cases N] [--judge-latency S]
        [--phases load,approvals,eval] [--profile DIR]

Starts, as the Procfile does, the gateway, internal listener, event ingester, the
gateway's worker and the runner (tests/stack.py, without its test-size capacity:
bench/capacity_stack.py), and an OpenAI-compatible upstream on loopback that streams
its answer over `--latency` seconds in `--chunks` pieces (tests/slow_upstream.py, a
process of its own). Each of two projects gets a model resource `slow` pointing at it,
a design input → model (`slow`) → output, and viewers who follow its sampled runs.
Then, of the phases asked for (default all, in this order):

1. load (bench/capacity_load.py): N runs kept in flight; in_flight, refusals,
   throughput_ratio, memory per run and per upstream call, added latency, sse_*. The
   lanes start at once (a burst of N starts, and waves of N after it), or spread over
   `--ramp` seconds (with the upstream latency: runs arrive at an even pace);
2. approvals (bench/capacity_approvals.py): approval_waiting_runs held while the same
   project still starts runs, and what they cost in memory;
3. eval (bench/capacity_eval.py): eval_judged_cases_per_s with a slow judge.

KIONGA_BENCH_DB names the database (default kionga_bench_capacity). The last line is one
JSON object of the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.capacity_approvals import hold_approvals  # noqa: E402
from bench.capacity_eval import evaluate  # noqa: E402
from bench.capacity_load import (  # noqa: E402
    create_designs,
    measure_load,
    warm_up,
    watchers_needed,
)
from bench.capacity_stack import (  # noqa: E402
    DB_NAME,
    HTTP_ERRORS,
    DefaultStack,
    Project,
    add_models,
    add_watchers,
    rss,
    start_upstream,
    streams_per_user,
)
from bench.http_client import AsyncClient  # noqa: E402
from bench.stack_setup import PG, bootstrap, fresh_database  # noqa: E402

PHASES = ("load", "approvals", "eval")


async def measure(stack: DefaultStack, projects: list[Project], upstream: str,
                  upstream_pid: int, args: argparse.Namespace,
                  per_user: int) -> dict[str, Any]:
    dsn = f"{PG}/{DB_NAME}"
    # The light client (bench/http_client.py): its CPU is not the stack's to spend.
    clients = [AsyncClient(stack.base_url, p.token, timeout=args.latency + 120.0)
               for p in projects]
    figures: dict[str, Any] = {}
    try:
        idle: dict[str, int] = {}
        if "load" in args.phases or "approvals" in args.phases:
            await create_designs(clients, projects)
            await warm_up(stack, clients, projects, args, dsn, per_user)
            await asyncio.sleep(1.0)
            idle = rss(stack, tuple(stack.processes))
        if "load" in args.phases:
            figures |= await measure_load(stack, clients, projects, args, dsn, per_user, idle,
                                          upstream, upstream_pid)
        if "approvals" in args.phases:
            figures |= await hold_approvals(stack, clients[0], projects[0], args, dsn,
                                            sum(idle.values()))
        if "eval" in args.phases:
            figures |= await evaluate(stack, clients[1], projects[1], args)
        figures["http_errors"] = HTTP_ERRORS[0]
        return figures
    finally:
        for client in clients:
            await client.aclose()


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=40, help="lanes: runs kept in flight")
    parser.add_argument("--latency", type=float, default=5.0, help="upstream seconds")
    parser.add_argument("--chunks", type=int, default=20, help="pieces of a streamed answer")
    parser.add_argument("--sample", type=int, default=None,
                        help="lanes that follow their runs over SSE (default N/10, ≥ 10)")
    parser.add_argument("--rounds", type=int, default=4, help="runs per lane")
    parser.add_argument("--ramp", type=float, default=0.0,
                        help="seconds over which the lanes' first starts are spread (0: "
                             "all at once, a burst; the upstream latency: the lanes' runs "
                             "arrive at an even pace instead of in waves)")
    parser.add_argument("--max-seconds", type=float, default=60.0,
                        help="no new start in the load after this")
    parser.add_argument("--approvals", type=int, default=None,
                        help="approval-waiting runs to try (default N)")
    parser.add_argument("--eval-cases", type=int, default=20)
    parser.add_argument("--judge-latency", type=float, default=2.0)
    parser.add_argument("--eval-timeout", type=float, default=120.0)
    parser.add_argument("--profile", type=Path, default=None,
                        help="py-spy the stack's processes during the load into this folder")
    parser.add_argument("--phases", default=",".join(PHASES),
                        help=f"which phases to run, comma-separated ({', '.join(PHASES)})")
    args = parser.parse_args()
    args.phases = [name.strip() for name in args.phases.split(",") if name.strip()]
    unknown = [name for name in args.phases if name not in PHASES]
    if unknown:
        parser.error(f"unknown phase(s): {', '.join(unknown)}")
    if args.sample is None:
        args.sample = min(args.runs, max(10, args.runs // 10))
    args.sample = min(args.sample, args.runs)
    if args.approvals is None:
        args.approvals = args.runs
    return args


def main() -> None:
    args = arguments()
    # The model server is on loopback: the operator allows it (kionga.egress).
    stack = DefaultStack(database_url=f"{PG}/{DB_NAME}", log_dir=ROOT / "var" / "bench-logs",
                         gateway_workers=2, extra_env={
                             "KIONGA_EGRESS_ALLOW": "127.0.0.1",
                             # Room for the judge's latency and the stack's own overhead.
                             "KIONGA_JUDGE_TIMEOUT_SECONDS": str(int(args.judge_latency) + 10)})
    env = {**os.environ, **stack.env()}
    fresh_database(env, DB_NAME)
    projects = [Project(*bootstrap(env, name, name), name) for name in ("bench-a", "bench-b")]
    per_user = streams_per_user(env)
    add_watchers(env, projects, watchers_needed(args.sample, len(projects), per_user))
    upstream, url = start_upstream(args)
    try:
        add_models(env, projects, url)
        try:
            # Inside: a stack that did not become ready is stopped too (its processes
            # would hold the bench database's sessions, and the next run's dropdb fails).
            stack.start()
            figures = asyncio.run(measure(stack, projects, url, upstream.pid, args, per_user))
        finally:
            stack.stop()
    finally:
        upstream.terminate()
        upstream.wait()
    figures["at"] = datetime.now().isoformat(timespec="seconds")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
