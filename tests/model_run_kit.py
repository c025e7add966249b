"""Runs of input → model (a Kionga model ID) … → output, by the runner's engine with
its real client (runner.http_resources) against an internal listener."""

from __future__ import annotations

from typing import Any

from contracts.normalize import normalize
from runner.engine import run_graph
from runner.http_resources import HttpResources
from runner.request import RunRequest


def model_graph(model: str, nodes: int = 1) -> dict[str, Any]:
    """input → m1 → … → mN → output, each model node asking `model`."""
    ids = ["input", *[f"m{n}" for n in range(1, nodes + 1)], "output"]
    kinds = ["input", *["model"] * nodes, "output"]
    doc = {"schema_version": 2, "name": "t", "settings": {},
           "nodes": [{"id": i, "kind": k, "config": {"model": model} if k == "model" else {}}
                     for i, k in zip(ids, kinds, strict=True)],
           "edges": [{"from": a, "to": b} for a, b in zip(ids, ids[1:], strict=False)]}
    return normalize(doc).graph


async def run_models(base: str, credential: str, model: str = "gpt", nodes: int = 1,
                     timeout: float = 20.0) -> list[dict[str, Any]]:
    """Every event of one such run (node.delta included), the terminal one last."""
    events: list[dict[str, Any]] = []
    client = HttpResources(base, credential, timeout=timeout)
    try:
        await run_graph(RunRequest(graph=model_graph(model, nodes), input="hi",
                                   retry_delay_seconds=0.0),
                        resources=client, emit=events.append)
    finally:
        await client.aclose()
    return events


def of(events: list[dict[str, Any]], type_: str, node_id: str | None = None
       ) -> list[dict[str, Any]]:
    return [e for e in events
            if e["type"] == type_ and (node_id is None or e.get("node_id") == node_id)]
