"""bench/capacity.py's evaluation: project B evaluates `--eval-cases` judged cases of an
instant graph, in designs of at most MAX_CASES_PER_DESIGN evaluated together; the judge
is its model resource `judge` on the slow upstream, answering after `--judge-latency`
seconds. A small evaluation first warms the gateway's worker and the judge's path
(not timed). eval_seconds is from the first start to the last evaluation's end."""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

import httpx

from bench.capacity_stack import Project, call, create_design, instant_graph

MAX_CASES_PER_DESIGN = 100  # evaluations.serializers.MAX_CASES
WARM_CASES = 4


async def judged_designs(client: httpx.AsyncClient, project: Project, cases: int,
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
                         json={"revision": 0, "cases": fixtures})
        if put.status_code != 200:
            raise RuntimeError(f"fixtures answered {put.status_code}: {put.text}")
        designs.append(design)
    return designs


async def run_evaluations(client: httpx.AsyncClient, designs: list[str],
                          timeout: float) -> tuple[float, list[dict[str, Any]]]:
    """Start an evaluation of each design at once; (seconds until all ended, their
    results: those that ended within `timeout`)."""
    began = time.monotonic()
    urls = []
    for design in designs:
        started = await call(client, "POST", f"/api/v1/agent-designs/{design}/evaluations",
                             json={})
        if started.status_code != 201:
            raise RuntimeError(f"evaluation answered {started.status_code}: {started.text}")
        urls.append(f"/api/v1/agent-evaluations/{started.json()['id']}")
    results: dict[str, dict[str, Any]] = {}
    while len(results) < len(urls) and time.monotonic() - began < timeout:
        for url in urls:
            if url not in results:
                got = (await call(client, "GET", url)).json()
                if got["status"] not in ("queued", "running"):
                    results[url] = got
        await asyncio.sleep(0.1)
    return time.monotonic() - began, list(results.values())


async def evaluate(client: httpx.AsyncClient, project: Project,
                   args: argparse.Namespace) -> dict[str, Any]:
    warm = await judged_designs(client, project, WARM_CASES, "warm")
    await run_evaluations(client, warm, args.eval_timeout)
    designs = await judged_designs(client, project, args.eval_cases, "judged")
    seconds, results = await run_evaluations(client, designs, args.eval_timeout)
    done = sum(r["counts"]["passed"] + r["counts"]["failed"] for r in results)
    passed = sum(r["counts"]["passed"] for r in results)
    print(f"evaluation: {done} judged cases in {seconds:.1f} s", flush=True)
    return {"eval_cases": args.eval_cases, "eval_judge_latency": args.judge_latency,
            "eval_seconds": round(seconds, 2), "eval_cases_done": done,
            "eval_cases_passed": passed, "eval_finished": len(results) == len(designs),
            "eval_judged_cases_per_s": round(done / seconds, 2)}
