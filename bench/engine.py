"""Benchmark the engine's own overhead with instant components (not a test).

(a) chain100: input → 98 prompt nodes in a chain → output (100 nodes);
(b) fanout100: input → 97 parallel prompt nodes → join (any) → output (100 nodes).

Each run goes through run_graph with a no-op emit (every event is still built,
timestamped, redacted and truncated), the mock backend and in-memory resources, on
one event loop. Prints the median time per run and, as its last line, one JSON
object: {"engine_chain100_ms": ..., "engine_fanout100_ms": ...}.
Target: under 20 ms per 100-node run (0.2 ms per node).

    .venv/bin/python bench/engine.py [--iterations N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from contracts.normalize import normalize  # noqa: E402
from runner.engine import run_graph  # noqa: E402
from runner.inmemory_resources import InMemoryResources  # noqa: E402
from runner.request import RunRequest  # noqa: E402

TARGET_MS = 20.0


def chain100() -> dict[str, Any]:
    ids = ["input"] + [f"p{i:02d}" for i in range(98)] + ["output"]
    nodes: list[dict[str, Any]] = [{"id": "input", "kind": "input"}]
    nodes += [{"id": n, "kind": "prompt", "config": {"template": "{input}."}} for n in ids[1:-1]]
    nodes.append({"id": "output", "kind": "output"})
    edges = [{"from": a, "to": b} for a, b in zip(ids, ids[1:], strict=False)]
    return normalize({"schema_version": 2, "nodes": nodes, "edges": edges,
                      "settings": {"max_steps": 200}}).graph


def fanout100() -> dict[str, Any]:
    branches = [f"p{i:02d}" for i in range(97)]
    nodes: list[dict[str, Any]] = [{"id": "input", "kind": "input"}]
    nodes += [{"id": n, "kind": "prompt", "config": {"template": f"{n}: {{input}}"}}
              for n in branches]
    nodes += [{"id": "join", "kind": "join", "config": {"require": "any"}},
              {"id": "output", "kind": "output"}]
    edges = [{"from": "input", "to": n} for n in branches]
    edges += [{"from": n, "to": "join"} for n in branches]
    edges.append({"from": "join", "to": "output"})
    return normalize({"schema_version": 2, "nodes": nodes, "edges": edges,
                      "settings": {"max_steps": 200}}).graph


async def measure(graph: dict[str, Any], iterations: int) -> tuple[float, int]:
    resources = InMemoryResources()
    events = 0

    def emit(event: dict[str, Any]) -> None:
        nonlocal events
        events += 1

    request = RunRequest(graph=graph, input="How do refunds work?", secrets=["hunter2-secret"])
    for _ in range(20):  # warm up: imports, regex caches, the loop
        await run_graph(request, resources=resources, emit=emit)
    times: list[float] = []
    for _ in range(iterations):
        events = 0
        started = time.perf_counter()
        result = await run_graph(request, resources=resources, emit=emit)
        times.append((time.perf_counter() - started) * 1000)
        assert result.status == "completed", result
    return statistics.median(times), events


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iterations", type=int, default=300)
    args = parser.parse_args()
    figures: dict[str, float] = {}
    for name, graph in (("chain100", chain100()), ("fanout100", fanout100())):
        median, events = asyncio.run(measure(graph, args.iterations))
        figures[f"engine_{name}_ms"] = round(median, 3)
        verdict = "ok" if median < TARGET_MS else "OVER TARGET"
        print(f"{name}: median {median:.3f} ms per run, {median / 100 * 1000:.1f} µs per node, "
              f"{events} events ({verdict}: < {TARGET_MS:g} ms)")
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
