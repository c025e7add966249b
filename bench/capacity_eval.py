"""bench/capacity.py's evaluation: project B evaluates `--eval-cases` judged cases of an
instant graph, in designs of at most MAX_CASES_PER_DESIGN evaluated together; the judge
is its model resource `judge` on the slow upstream, answering after `--judge-latency`
seconds. A small evaluation first warms the gateway's worker and the judge's path
(not timed). eval_seconds is from the first start to the last evaluation's end (its
finished_at); eval_cpu_ms_per_case the CPU of each of the stack's processes (and the
PostgreSQL backends of its database) per judged case meanwhile."""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

import psycopg

from bench.capacity_stack import DB_NAME, Project, call, create_design, instant_graph
from bench.cpu import CpuMeter, group, postgres_backends
from bench.http_client import AsyncClient
from bench.stack_setup import PG
from tests.stack import Stack

MAX_CASES_PER_DESIGN = 100  # evaluations.serializers.MAX_CASES
WARM_CASES = 4
POLL = 0.1  # seconds between looks at the evaluations' ends


async def judged_designs(client: AsyncClient, project: Project, cases: int,
                         name: str) -> list[str]:
    """Designs holding `cases` judged cases between them."""
    designs = []
    for first in range(0, cases, MAX_CASES_PER_DESIGN):
        count = min(MAX_CASES_PER_DESIGN, cases - first)
        design = await create_design(client, project, f"{name} {first}", instant_graph())
        fixtures = [{"id": f"case-{i}", "name": f"case {i}", "input": f"question {i}",
                     "tags": ["judged"], "history": [],
                     "expected": {"calls": ["answer"],
                                  "judge": {"criteria": ["task_completion"],
                                            "min_score": 0.7}}}
                    for i in range(first, first + count)]
        put = await call(client, "PUT", f"/api/v1/agent-designs/{design}/fixtures",
                         {"revision": 0, "cases": fixtures})
        if put.status != 200:
            raise RuntimeError(f"fixtures answered {put.status}: {put.text}")
        designs.append(design)
    return designs


async def run_evaluations(client: AsyncClient, designs: list[str], dsn: str,
                          timeout: float) -> tuple[float, list[dict[str, Any]]]:
    """Start an evaluation of each design at once; (seconds from the first start to the
    last end, their results: those that ended within `timeout`). The ends are watched in
    the database (as the load's runs are), so that polling costs the gateway nothing;
    the results are read through the API once they ended."""
    began, ids = time.time(), []
    for design in designs:
        started = await call(client, "POST", f"/api/v1/agent-designs/{design}/evaluations",
                             {})
        if started.status != 201:
            raise RuntimeError(f"evaluation answered {started.status}: {started.text}")
        ids.append(str(started.json()["id"]))
    ended = began + timeout
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        while time.time() - began < timeout:
            row = await (await conn.execute(
                "SELECT count(*), max(extract(epoch FROM finished_at))::float8 FROM "
                "evaluations_evaluation WHERE id = ANY(%s::uuid[]) AND finished_at IS NOT "
                "NULL", [ids])).fetchone()
            if row is not None and row[0] == len(ids):
                ended = float(row[1])
                break
            await asyncio.sleep(POLL)
    results = [got for evaluation_id in ids
               if (got := (await call(client, "GET",
                                      f"/api/v1/agent-evaluations/{evaluation_id}")).json())
               ["status"] not in ("queued", "running")]
    return ended - began, results


async def evaluate(stack: Stack, client: AsyncClient, project: Project,
                   args: argparse.Namespace) -> dict[str, Any]:
    warm = await judged_designs(client, project, WARM_CASES, "warm")
    dsn = f"{PG}/{DB_NAME}"
    await run_evaluations(client, warm, dsn, args.eval_timeout)
    designs = await judged_designs(client, project, args.eval_cases, "judged")
    meter = CpuMeter({**{name: group(process.pid) for name, process in stack.processes.items()},
                      "postgres": postgres_backends(DB_NAME)})
    seconds, results = await run_evaluations(client, designs, dsn, args.eval_timeout)
    spent = meter.spent()
    done = sum(r["counts"]["passed"] + r["counts"]["failed"] for r in results)
    passed = sum(r["counts"]["passed"] for r in results)
    print(f"evaluation: {done} judged cases in {seconds:.1f} s", flush=True)
    return {"eval_cases": args.eval_cases, "eval_judge_latency": args.judge_latency,
            "eval_seconds": round(seconds, 2), "eval_cases_done": done,
            "eval_cases_passed": passed, "eval_finished": len(results) == len(designs),
            "eval_judged_cases_per_s": round(done / seconds, 2),
            # CPU per judged case (its run and its judge run) of each process, and in all
            "eval_cpu_ms_per_case": {name: round(ms / max(1, done), 1)
                                     for name, ms in {**spent, "all": sum(spent.values())}.items()}}
