"""subflow, map and loop: run a published version's graph (handed over with the run).

A nested run has its own budgets (its graph's settings); its tokens also count
toward the calling run. Its events stay inside it, except approvals, which surface
on the calling node (runner.events.ForwardingEmitter).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from contracts.conversions import text_to_json, to_text
from contracts.types import PortType
from runner.components import implements
from runner.components.logic import check
from runner.context import NodeContext, NodeOutput
from runner.failures import NodeFailure


@implements("subflow")
async def run_subflow(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    version = ctx.required("subflow").strip()
    outcome = await ctx.run.run_subflow(ctx.node_id, version, to_text(value, vtype),
                                         ctx.clock)
    return NodeOutput("out", outcome.output, tokens=outcome.tokens)


def map_items(value: Any, vtype: PortType) -> list[Any]:
    """A JSON list maps over its elements; any other value is a one-item list."""
    if vtype == "text":
        data = text_to_json(value)
        if data == {"input": value}:  # not JSON text: the text itself is the one item
            return [value]
    else:
        data = value
    return data if isinstance(data, list) else [data]


def item_text(item: Any) -> str:
    # Strings go in as they are; anything else as compact JSON.
    return item if isinstance(item, str) else json.dumps(item, ensure_ascii=False,
                                                        separators=(",", ":"))


@implements("map")
async def run_map(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    version = ctx.required("subflow").strip()
    items = map_items(value, vtype)
    max_items = ctx.int_setting("max_items")
    if len(items) > max_items:
        # Refuse rather than silently drop items: the error port can handle it.
        raise NodeFailure("node_error", f"{len(items)} items; max_items is {max_items}")
    gate = asyncio.Semaphore(ctx.int_setting("concurrency"))

    async def one(item: Any) -> tuple[str, int]:
        async with gate:
            outcome = await ctx.run.run_subflow(ctx.node_id, version, item_text(item),
                                                 ctx.clock)
            return outcome.output, outcome.tokens

    # gather keeps item order; the first failure cancels the rest.
    results = await _gather_all(one(item) for item in items)
    return NodeOutput("out", [r[0] for r in results], iterations=len(items),
                      tokens=sum(r[1] for r in results))


async def _gather_all(coros: Any) -> list[tuple[str, int]]:
    tasks = [asyncio.ensure_future(c) for c in coros]
    try:
        return list(await asyncio.gather(*tasks))
    finally:
        for task in tasks:
            task.cancel()


@implements("loop")
async def run_loop(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    """Run the subflow on its own output until `until` holds (port out) or
    max_iterations pass (port exhausted). Without `until` it runs max_iterations
    times and fires out. Without a subflow (optional, reference) it runs nothing: the
    input passes through, on out when `until` is empty or holds for it, else on
    exhausted (what iterating an identity would give), with 0 iterations."""
    version = ctx.setting("subflow").strip()
    until = ctx.setting("until").strip()
    limit = ctx.int_setting("max_iterations")
    text, tokens = to_text(value, vtype), 0
    if not version:
        port = "exhausted" if until and not check(until, text, "until") else "out"
        return NodeOutput(port, text, iterations=0)
    for iteration in range(1, limit + 1):
        outcome = await ctx.run.run_subflow(ctx.node_id, version, text, ctx.clock)
        text, tokens = outcome.output, tokens + outcome.tokens
        if until and check(until, text, "until"):
            return NodeOutput("out", text, iterations=iteration, tokens=tokens)
    port = "exhausted" if until else "out"
    return NodeOutput(port, text, iterations=limit, tokens=tokens)
