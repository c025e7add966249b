"""A run shares its event loop (a runner process hosts many on one, runner.host): the
engine yields between waves of nodes, and a model's stream yields every
DELTAS_PER_YIELD pieces even when none of them waits (the mock's, or a buffered one)."""

from __future__ import annotations

import asyncio
from typing import Any

from engine_kit import chain

from runner.context import DELTAS_PER_YIELD
from runner.engine import run_graph
from runner.inmemory_resources import InMemoryResources
from runner.request import RunRequest

WORDS = 3_000


async def ticks_during(g: dict[str, Any], text: str) -> tuple[int, str]:
    """How often another task of the loop ran while the run did; the run's status."""
    ticks = 0
    running = True

    async def other() -> None:
        nonlocal ticks
        while running:
            ticks += 1
            await asyncio.sleep(0)

    neighbour = asyncio.ensure_future(other())
    await asyncio.sleep(0)
    result = await run_graph(RunRequest(graph=g, input=text), resources=InMemoryResources(),
                             emit=None)
    running = False
    await neighbour
    return ticks, result.status


def test_a_long_stream_lets_the_loop_go_now_and_then() -> None:
    text = " ".join(f"w{i}" for i in range(WORDS))
    ticks, status = asyncio.run(ticks_during(chain(("model", "model", {"model": "llm"})), text))
    assert status == "completed"
    assert ticks >= WORDS // DELTAS_PER_YIELD


def test_a_chain_of_inline_nodes_yields_between_them() -> None:
    nodes = [(f"p{i}", "prompt", {"template": "{input}."}) for i in range(20)]
    ticks, status = asyncio.run(ticks_during(chain(*nodes), "x"))
    assert status == "completed"
    assert ticks >= 20
