"""Property: any valid DAG of a few kinds runs to exactly one terminal event, with seq
strictly increasing, every node decided once, and the same events on every run."""

from __future__ import annotations

from typing import Any

from engine_kit import run
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts.normalize import normalize
from contracts.registry import COMPONENTS

KINDS = ["prompt", "condition", "router", "join", "extract", "memory", "model"]
CONFIGS: dict[str, list[dict[str, str]]] = {
    "prompt": [{"template": "{input}"}, {"template": "x {input} y"},
               {"template": "{input}{input}"}],
    "condition": [{"expression": e} for e in
                  ["contains:a", "empty", "not_empty", "longer_than:5", "matches:^\\w+$"]],
    "router": [{"route_1": "contains:a"}, {"route_1": "empty", "route_2": "contains:x"},
               {"route_1": "longer_than:3", "route_2": "contains:b", "route_3": "equals:y",
                "route_4": "matches:\\d"}],
    "join": [{"require": "any"}, {"require": "all"}],
    "extract": [{"path": "input"}, {"path": "a.0", "missing": "empty"}, {"path": "0"}],
    "memory": [{}, {"strategy": "none"}, {"turns": "2"}],
    "model": [{}],
}
ids = st.from_regex(r"[a-z][a-z0-9-]{0,6}", fullmatch=True)


def ports(kind: str, config: dict[str, str]) -> list[str]:
    names = [p.name for p in COMPONENTS[kind].outputs if p.name != "error"]
    return [n for n in names if not n.startswith("route_") or config.get(n)]


@st.composite
def dags(draw: st.DrawFn) -> dict[str, Any]:
    count = draw(st.integers(min_value=1, max_value=10))
    names = draw(st.lists(ids, min_size=count + 2, max_size=count + 2, unique=True))
    nodes: list[dict[str, Any]] = [{"id": names[0], "kind": "input", "config": {}}]
    for name in names[1:-1]:
        kind = draw(st.sampled_from(KINDS))
        nodes.append({"id": name, "kind": kind, "config": draw(st.sampled_from(CONFIGS[kind]))})
    nodes.append({"id": names[-1], "kind": "output", "config": {}})
    edges: set[tuple[str, str, str]] = set()
    for i in range(1, len(nodes)):
        # Each node is fed by at least one earlier node (a DAG by construction).
        for j in draw(st.lists(st.integers(0, i - 1), min_size=1, max_size=3, unique=True)):
            src = nodes[j]
            port = draw(st.sampled_from(ports(src["kind"], src["config"])))
            edges.add((src["id"], port, nodes[i]["id"]))
    order = draw(st.permutations(range(len(nodes))))
    edge_list = draw(st.permutations(sorted(edges)))
    doc = {
        "schema_version": 2,
        "nodes": [nodes[k] for k in order],
        "edges": [{"from": a, "from_port": p, "to": b, "to_port": "in"} for a, p, b in edge_list],
        "settings": {"max_steps": draw(st.sampled_from([3, 8, 50]))},
    }
    return normalize(doc).graph


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(g=dags(), text=st.sampled_from(["", "a", "abc 123", '{"a": [1]}', "[5]", "x y"]),
       stop=st.booleans())
def test_it_always_ends_with_one_terminal_event(g: dict[str, Any], text: str,
                                                stop: bool) -> None:
    stop_after = sorted(n["id"] for n in g["nodes"])[0] if stop else None
    first = run(g, text, stop_after=stop_after,
                history=[{"role": "user", "content": "earlier"}])  # checks the invariants
    decided = [e["node_id"] for e in first.stored
               if e["type"] in ("node.started", "node.skipped")]
    assert len(decided) == len(set(decided)), "every node is decided at most once"
    if first.result.status == "completed" and stop_after is None:
        assert sorted(decided) == sorted(n["id"] for n in g["nodes"])
    again = run(g, text, stop_after=stop_after,
                history=[{"role": "user", "content": "earlier"}])
    assert [(e["type"], e.get("node_id"), e.get("port")) for e in again.stored] == [
        (e["type"], e.get("node_id"), e.get("port")) for e in first.stored
    ], "deterministic"
