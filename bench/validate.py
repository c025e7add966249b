"""Benchmark validate_graph (which also normalizes and hashes) on two graphs.

(a) a maximal graph: 100 nodes, 300 edges, 30 config keys on every node (the real
    settings of its kind, the rest unknown keys, which the report lists as
    unknown_config_key), prompt templates and system prompts of several KB;
(b) the reference example of agent-graph-reference.md.

Prints the median time per call of each and, as its last line, one JSON object:
{"validate_max_ms": ..., "validate_example_ms": ...}. Targets: < 5 ms and < 0.2 ms.

    .venv/bin/python bench/validate.py [--iterations N]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from contracts.hashing import content_sha256  # noqa: E402
from contracts.registry import COMPONENTS, LIMITS  # noqa: E402
from contracts.validate import validate_graph  # noqa: E402

EXAMPLE: dict[str, Any] = {
    "schema_version": 2,
    "name": "Support agent",
    "nodes": [
        {"id": "input", "kind": "input", "name": "Question", "x": 40, "y": 160},
        {"id": "route", "kind": "condition", "name": "Refund?", "x": 260, "y": 160,
         "config": {"expression": "contains:refund"}, "group": "Routing"},
        {"id": "output", "kind": "output", "name": "Reply", "x": 480, "y": 160},
    ],
    "edges": [
        {"from": "input", "to": "route", "from_port": "out", "to_port": "in"},
        {"from": "route", "to": "output", "from_port": "true", "to_port": "in"},
    ],
    "settings": {"max_steps": 50, "timeout_seconds": 60, "max_tokens": 50000},
}

# The middle of the maximal graph cycles through these kinds.
MIDDLE_KINDS = ("prompt", "model", "router", "condition", "knowledge", "extract", "memory",
                "join", "approval", "prompt", "model")

# Realistic values for the real settings; long ones are several KB.
LONG_TEMPLATE = ("You are a support assistant for Kionga. Answer politely and precisely. "
                 * 90) + "Question: {input}"
LONG_SYSTEM = "Follow the company policy on refunds, returns and escalations. " * 70
VALUES: dict[str, str] = {
    "template": LONG_TEMPLATE,
    "model": "llm",
    "system": LONG_SYSTEM,
    "route_1": "contains:refund",
    "route_2": "matches:(?i)\\border\\s+#?\\d{4,10}\\b",
    "route_3": "longer_than:400",
    "route_4": "equals:help",
    "expression": "not_contains:unsubscribe",
    "knowledge_base": "kb-support",
    "query": "Policies about: {input}",
    "limit": "8",
    "path": "items.0.name",
    "missing": "empty",
    "strategy": "window",
    "turns": "12",
    "require": "all",
    "message": "Please approve this answer before it is sent: {input}. " * 40,
    "timeout_seconds": "240",
}


def node_config(kind: str, index: int) -> dict[str, str]:
    config = {s.name: VALUES[s.name] for s in COMPONENTS[kind].settings if s.name in VALUES}
    # The rest are keys a canvas might leave behind: short, and unknown to the kind.
    extra = LIMITS["max_config_keys"] - len(config)
    for n in range(extra):
        config[f"ui_hint_{n}"] = f"#{(index * 31 + n) % 0xFFFFFF:06x} collapsed"
    return config


def maximal_graph() -> dict[str, Any]:
    rng = random.Random(7)
    count, edge_count = LIMITS["max_nodes"], LIMITS["max_edges"]
    kinds = ["input"] + [MIDDLE_KINDS[i % len(MIDDLE_KINDS)] for i in range(count - 2)]
    kinds.append("output")
    ids = [f"n{i:03d}-{kind}" for i, kind in enumerate(kinds)]
    nodes: list[dict[str, Any]] = [
        {"id": ids[i], "kind": kind, "name": f"Step {i}", "x": 40 * i, "y": 80,
         "group": f"Stage {i // 10}", "config": node_config(kind, i)}
        for i, kind in enumerate(kinds)
    ]
    seen: set[tuple[str, str, str]] = set()
    edges: list[dict[str, str]] = []

    def add(src: int, dst: int) -> None:
        outputs = [p.name for p in COMPONENTS[kinds[src]].outputs]
        port = outputs[rng.randrange(len(outputs))] if src + 1 != dst else outputs[0]
        key = (ids[src], port, ids[dst])
        if key not in seen:
            seen.add(key)
            edges.append({"from": key[0], "to": key[2], "from_port": port, "to_port": "in"})

    # A chain keeps every node on a path from the input to the output ...
    for i in range(count - 1):
        add(i, i + 1)
    # ... and forward edges (never backwards: no cycles) fill up to the limit.
    while len(edges) < edge_count:
        src = rng.randrange(0, count - 2)
        add(src, rng.randrange(src + 2, count))
    return {"schema_version": 2, "name": "Maximal", "nodes": nodes, "edges": edges,
            "settings": {"max_steps": 200, "timeout_seconds": 300, "max_tokens": 1_000_000}}


def median_ms(doc: dict[str, Any], iterations: int) -> tuple[float, float]:
    """Median wall time (perf_counter_ns) and median CPU time of one call, in ms.

    The CPU time of this thread is printed too: on a busy machine it shows what the
    call itself costs, while the wall time also counts waiting for a core.
    """
    for _ in range(min(iterations, 20)):  # warm caches (parsed conditions, regexes)
        validate_graph(doc)
    wall, cpu = [], []
    for _ in range(iterations):
        start, start_cpu = time.perf_counter_ns(), time.thread_time_ns()
        report = validate_graph(doc)
        wall.append(time.perf_counter_ns() - start)
        cpu.append(time.thread_time_ns() - start_cpu)
    # validate_graph hashes whenever the graph normalizes; make sure it did.
    assert report.content_sha256 is not None and report.graph is not None
    assert report.content_sha256 == content_sha256(report.graph)
    return statistics.median(wall) / 1e6, statistics.median(cpu) / 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=300, help="calls on the maximal graph")
    args = parser.parse_args()
    big = maximal_graph()
    report = validate_graph(big)
    size = len(json.dumps(big))
    codes = sorted({i.code for i in report.issues})
    print(f"maximal graph: {len(big['nodes'])} nodes, {len(big['edges'])} edges, "
          f"{size / 1024:.0f} KiB of JSON; issues: {len(report.issues)} ({', '.join(codes)})")
    max_ms, max_cpu = median_ms(big, args.iterations)
    example_ms, example_cpu = median_ms(EXAMPLE, args.iterations * 20)
    print(f"validate + hash, maximal graph:     median {max_ms:.3f} ms per call "
          f"(CPU {max_cpu:.3f} ms; target < 5)")
    print(f"validate + hash, reference example: median {example_ms:.4f} ms per call "
          f"(CPU {example_cpu:.4f} ms; target < 0.2)")
    result = {"validate_max_ms": round(max_ms, 4), "validate_example_ms": round(example_ms, 4)}
    print(json.dumps(result))


if __name__ == "__main__":
    main()
