"""A call the gateway refuses because the run's cancel was requested (401
run_cancelled) waits for that cancel: the run ends run.cancelled, not failed."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

from engine_http_kit import json_answer, serve
from engine_kit import chain, check_events, run_async

from runner.http_resources import HttpResources
from runner.resources import RUN_CANCELLED


def cancelled_gateway(method: str, path: str, headers: dict[str, str], body: Any
                      ) -> tuple[int, dict[str, str], Iterator[bytes]]:
    return json_answer(401, {"error": {"code": RUN_CANCELLED, "message": "cancelled",
                                       "details": {}}})


def test_it_ends_cancelled_when_a_call_meets_the_cancel_first() -> None:
    async def go(base: str, seen: list[dict[str, Any]]) -> Any:
        client = HttpResources(base + "/api/v1/", "krc_x")
        cancel = asyncio.Event()
        run = asyncio.ensure_future(run_async(chain(("t", "tool", {"tool": "lookup"})),
                                              resources=client, allow_side_effects=True,
                                              cancel=cancel))
        while not seen:  # the gateway refused the call
            await asyncio.sleep(0.005)
        # The runner learns of the cancel a little later (it polls Redis); a failure
        # in between would have ended the run already.
        await asyncio.sleep(0.2)
        cancel.set()
        try:
            return await run
        finally:
            await client.aclose()

    with serve(cancelled_gateway) as (base, seen):
        done = asyncio.run(go(base, seen))
    check_events(done.events)
    assert done.result.status == "cancelled"
    assert [e["type"] for e in done.events][-1] == "run.cancelled"
    assert not any(e["type"] == "node.failed" for e in done.events)
