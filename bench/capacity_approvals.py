"""bench/capacity.py's approvals: project A starts runs of input → approval → output (up
to `--approvals`, one at a time so a refusal is unambiguous) until one is refused.
approval_waiting_runs is how many of them wait on a person while the project can still
start a run (checked with one more run), approval_waiting_mb the resident memory of
all the stack's processes above idle. They are cancelled after."""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

import psycopg

from bench.capacity_stack import MB, Project, call, create_design, instant_graph, rss
from bench.http_client import AsyncClient
from tests.stack import Stack


def approval_graph() -> dict[str, Any]:
    return {"schema_version": 2,
            "nodes": [{"id": "input", "kind": "input"},
                      {"id": "gate", "kind": "approval", "config": {"message": "Go?"}},
                      {"id": "output", "kind": "output"}],
            "edges": [{"from": "input", "to": "gate"},
                      {"from": "gate", "to": "output", "from_port": "approved"}],
            "settings": {"timeout_seconds": 300}}


async def hold_approvals(stack: Stack, client: AsyncClient, project: Project,
                         args: argparse.Namespace, dsn: str,
                         idle_total: int) -> dict[str, Any]:
    gated = await create_design(client, project, "approvals", approval_graph())
    probe = await create_design(client, project, "probe", instant_graph())
    accepted: list[str] = []
    refused = False
    while len(accepted) < args.approvals and not refused:
        answer = await call(client, "POST", f"/api/v1/agent-designs/{gated}/runs",
                            {"input": f"wait {len(accepted)}"})
        if answer.status == 201:
            accepted.append(str(answer.json()["id"]))
        elif answer.status == 429:
            refused = True
        else:
            raise RuntimeError(f"start answered {answer.status}: {answer.text}")
    waiting = await wait_status(dsn, accepted, "status = 'waiting'", timeout=60)
    total = sum(rss(stack, tuple(stack.processes)).values())
    answer = await call(client, "POST", f"/api/v1/agent-designs/{probe}/runs",
                        {"input": "probe"})
    if answer.status == 201:
        held = waiting
    elif answer.status == 429:
        # The last start accepted was made with one fewer waiting.
        held = max(0, waiting - 1)
    else:
        raise RuntimeError(f"probe answered {answer.status}: {answer.text}")
    print(f"approvals: {held} waiting while the project still starts runs", flush=True)
    await asyncio.gather(*(call(client, "POST",
                                f"/api/v1/agent-designs/{gated}/runs/{run_id}/cancel")
                           for run_id in accepted))
    await wait_status(dsn, accepted, "finished_at IS NOT NULL", timeout=60)
    return {"approval_waiting_runs": held, "approval_started": len(accepted),
            "approval_refused": refused,
            "approval_waiting_mb": round((total - idle_total) / MB, 1)}


async def wait_status(dsn: str, ids: list[str], condition: str, timeout: float) -> int:
    """How many of `ids` meet `condition` (SQL on runs_run): all of them, or as many as
    after `timeout`."""
    deadline = time.monotonic() + timeout
    query = f"SELECT count(*) FROM runs_run WHERE id = ANY(%s::uuid[]) AND {condition}"
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        while True:
            row = await (await conn.execute(query, [ids])).fetchone()
            count = int(row[0]) if row else 0
            if count == len(ids) or time.monotonic() > deadline:
                return count
            await asyncio.sleep(0.2)
