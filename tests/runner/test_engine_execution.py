"""Scheduling: readiness, skip propagation, node-id order, concurrency, stop_after,
and the conversion table on edges."""

from __future__ import annotations

import asyncio
import json
import random
import time
from typing import Any

import pytest
from engine_kit import chain, graph, run, run_async

from runner.backends.mock import MockBackend
from runner.inmemory_resources import InMemoryResources


def test_it_propagates_skips_downstream() -> None:
    g = graph(
        [("input", "input"), ("c", "condition", {"expression": "equals:go"}),
         ("a", "prompt", {"template": "a"}), ("b", "prompt", {"template": "b {input}"}),
         ("d", "prompt", {"template": "d"}), ("output", "output")],
        ["input>c", "c.true>a", "a>b", "b>d", "c.false>output", "d>output"],
    )
    done = run(g, "stop")
    assert done.skipped() == ["a", "b", "d"]
    assert done.result.output == "stop"
    assert done.result.steps == 3  # skipped nodes are not steps


def test_it_completes_with_null_output_when_the_output_node_is_skipped() -> None:
    g = graph([("input", "input"), ("c", "condition", {"expression": "empty"}),
               ("output", "output")], ["input>c", "c.true>output"])
    done = run(g, "not empty")
    assert done.result.status == "completed"
    assert done.result.output is None
    assert done.terminal["output"] is None


def test_it_runs_a_node_when_any_inbound_edge_carried_a_value() -> None:
    g = graph([("input", "input"), ("c", "condition", {"expression": "contains:a"}),
               ("p", "prompt", {"template": "P {input}"}), ("output", "output")],
              ["input>c", "c.true>p", "c.false>p", "p>output"])
    assert run(g, "a").result.output == "P a"
    assert run(g, "b").result.output == "P b"


def test_it_gives_a_non_join_node_the_value_of_the_first_source_by_id() -> None:
    g = graph([("input", "input"), ("zeta", "prompt", {"template": "Z"}),
               ("alpha", "prompt", {"template": "A"}), ("output", "output")],
              ["input>zeta", "input>alpha", "zeta>output", "alpha>output"])
    assert run(g).result.output == "A"


def diamond(order: list[int]) -> dict[str, Any]:
    nodes: list[Any] = [("input", "input"), ("c", "prompt", {"template": "c"}),
                        ("a", "prompt", {"template": "a"}), ("b", "prompt", {"template": "b"}),
                        ("j", "join"), ("output", "output")]
    edges = ["input>c", "input>a", "input>b", "c>j", "a>j", "b>j", "j>output"]
    g = graph(nodes, edges)
    g["nodes"] = [g["nodes"][i] for i in order]
    g["edges"] = list(reversed(g["edges"])) if order[0] % 2 else g["edges"]
    return g


@pytest.mark.parametrize("seed", range(6))
def test_it_starts_ready_nodes_in_node_id_order_whatever_the_array_order(seed: int) -> None:
    order = list(range(6))
    random.Random(seed).shuffle(order)
    done = run(diamond(order))
    assert done.ran() == ["input", "a", "b", "c", "j", "output"]
    assert json.loads(done.result.output or "") == {"a": "a", "b": "b", "c": "c"}
    reference = [(e["type"], e.get("node_id")) for e in run(diamond(list(range(6)))).stored]
    assert [(e["type"], e.get("node_id")) for e in done.stored] == reference


def test_it_starts_earlier_ready_nodes_before_their_successors() -> None:
    # b and c are ready together with a; a's successor (aa) waits for the next wave.
    g = graph([("input", "input"), ("a", "prompt", {"template": "1"}),
               ("b", "prompt", {"template": "2"}), ("c", "prompt", {"template": "3"}),
               ("aa", "prompt", {"template": "4"}), ("j", "join"), ("output", "output")],
              ["input>a", "input>b", "input>c", "a>aa", "aa>j", "b>j", "c>j", "j>output"])
    assert run(g).ran() == ["input", "a", "b", "c", "aa", "j", "output"]


def slow_branches(delay: float) -> tuple[dict[str, Any], InMemoryResources]:
    async def slow(value: Any) -> str:
        await asyncio.sleep(delay)
        return "done"

    resources = InMemoryResources(functions={"slow": slow})
    g = graph([("input", "input"), ("left", "tool", {"tool": "slow"}),
               ("right", "tool", {"tool": "slow"}), ("j", "join", {"require": "all"}),
               ("output", "output")],
              ["input>left", "input>right", "left>j", "right>j", "j>output"])
    return g, resources


def test_it_runs_independent_branches_concurrently() -> None:
    g, resources = slow_branches(0.3)
    started = time.monotonic()
    done = run(g, resources=resources, allow_side_effects=True)
    elapsed = time.monotonic() - started
    assert done.result.output == '{"left":"done","right":"done"}'
    assert elapsed < 0.5, f"two 0.3 s branches took {elapsed:.2f} s (sum would be 0.6)"
    # Their events interleave: both start before either completes.
    kinds = [(e["type"], e.get("node_id")) for e in done.stored]
    assert kinds.index(("node.started", "right")) < kinds.index(("node.completed", "left"))


def test_it_interleaves_streamed_deltas_of_concurrent_models() -> None:
    g = graph([("input", "input"), ("m1", "model"), ("m2", "model"), ("j", "join"),
               ("output", "output")], ["input>m1", "input>m2", "m1>j", "m2>j", "j>output"])
    done = run(g, "one two three four", backend=MockBackend(delay=0.01))
    sources = [e["node_id"] for e in done.of("node.delta")]
    assert set(sources) == {"m1", "m2"}
    assert sources != sorted(sources), "deltas of the two models interleave"


@pytest.mark.parametrize(
    ("stop", "output", "ran"),
    [
        ("a", "A hi", ["input", "a"]),
        ("b", "B A hi", ["input", "a", "b"]),
        ("input", "hi", ["input"]),
    ],
)
def test_it_stops_after_the_named_node(stop: str, output: str, ran: list[str]) -> None:
    g = chain(("a", "prompt", {"template": "A {input}"}), ("b", "prompt",
                                                          {"template": "B {input}"}))
    done = run(g, "hi", stop_after=stop)
    assert done.result.status == "completed"
    assert done.result.output == output
    assert done.ran() == ran


def test_it_stops_after_a_condition_with_its_value_as_text() -> None:
    g = graph([("input", "input"), ("j", "join"), ("output", "output")],
              ["input>j", "j>output"])
    assert run(g, "x", stop_after="j").result.output == '{"input":"x"}'


def test_it_cancels_other_branches_when_stopping_early() -> None:
    g, resources = slow_branches(5)
    g["nodes"].append({"id": "quick", "kind": "prompt", "config": {"template": "q"}})
    g["edges"].append({"from": "input", "to": "quick", "from_port": "out", "to_port": "in"})
    started = time.monotonic()
    done = run(g, resources=resources, allow_side_effects=True, stop_after="quick")
    assert time.monotonic() - started < 1
    assert done.result.output == "q"


def test_it_refuses_stop_after_an_unknown_node() -> None:
    done = run(chain(), stop_after="nope")
    assert done.result.status == "failed"
    assert done.terminal["reason"] == "invalid_request"


# The conversion table, exercised on real edges (contracts.conversions does the work).
CONVERSIONS = [
    # json → text: compact JSON, key order kept, non-ASCII raw.
    (graph([("input", "input"), ("x", "extract", {"path": "b"}),
            ("p", "prompt", {"template": "{input}"}), ("output", "output")],
           ["input>x", "x>p", "p>output"]),
     '{"b": {"z": 1, "a": "é"}}', '{"z":1,"a":"é"}'),
    # documents → text: texts joined by blank lines.
    (chain(("k", "knowledge", {"knowledge_base": "kb"}), ("p", "prompt", {"template": "{input}"})),
     "x", "one\n\ntwo"),
    # chat → text: the newest turn.
    (chain(("mem", "memory"), ("p", "prompt", {"template": "[{input}]"})), "newest", "[newest]"),
    # text → chat: one user turn.
    (graph([("input", "input"), ("mem", "memory", {"strategy": "none"}), ("j", "join"),
            ("output", "output")], ["input>mem", "mem>j", "j>output"]),
     "hi", '{"mem":[{"role":"user","content":"hi"}]}'),
    # text → json (inside extract): an object parses as itself...
    (chain(("x", "extract", {"path": "k"})), '{"k": [1]}', "[1]"),
    # ...anything else becomes {"input": text}.
    (chain(("x", "extract", {"path": "input"})), "[not json", '"[not json"'),
]


@pytest.mark.parametrize(("g", "text", "output"), CONVERSIONS)
def test_it_converts_values_on_edges(g: dict[str, Any], text: str, output: str) -> None:
    resources = InMemoryResources(knowledge={"kb": [{"text": "one"}, {"text": "two"}]})
    done = run(g, text, resources=resources, history=[{"role": "user", "content": "older"}])
    assert done.result.output == output


def test_it_rejects_a_graph_it_cannot_run_before_any_node_starts() -> None:
    g = chain()
    g["edges"].append({"from": "output", "to": "input", "from_port": "out", "to_port": "in"})
    done = run(g)
    assert done.result.status == "failed"
    assert done.terminal["reason"] == "invalid_graph"
    assert done.ran() == []


def test_it_rejects_a_cycle() -> None:
    g = chain(("a", "prompt", {"template": "x"}), ("b", "prompt", {"template": "y"}))
    g["edges"].append({"from": "b", "to": "a", "from_port": "out", "to_port": "in"})
    done = run(g)
    assert done.terminal["reason"] == "invalid_graph"
    assert "cycle" in done.terminal["error"]["message"]


def test_it_delivers_events_in_seq_order_across_branches() -> None:
    from runner.engine import run_graph
    from runner.request import RunRequest

    received: list[int] = []

    def emit(event: dict[str, Any]) -> None:
        if event["type"] != "node.delta":
            received.append(event["seq"])

    g = graph([("input", "input"), ("m1", "model"), ("m2", "model"), ("j", "join"),
               ("output", "output")], ["input>m1", "input>m2", "m1>j", "m2>j", "j>output"])
    result = asyncio.run(run_graph(RunRequest(graph=g, input="a b c"),
                                   resources=InMemoryResources(), emit=emit))
    assert received == list(range(result.events))


@pytest.mark.allow_output  # the failure is logged on purpose
def test_it_fails_the_run_when_emit_raises(caplog: pytest.LogCaptureFixture) -> None:
    from runner.engine import run_graph_sync
    from runner.request import RunRequest

    def emit(event: dict[str, Any]) -> None:
        raise RuntimeError("sink down")

    result = run_graph_sync(RunRequest(graph=chain(), input="x"),
                            resources=InMemoryResources(), emit=emit)
    assert (result.status, result.reason) == ("failed", "events_lost")
    assert result.error == {"code": "node_error", "message": "the run's events could not be "
                            "written (RuntimeError); the run was stopped"}
    assert result.steps == 0  # not even the input node ran
    assert caplog.text.count("emit failed") == 1  # logged once, not raised


def test_it_runs_many_graphs_on_one_loop() -> None:
    async def main() -> list[str | None]:
        runs = await asyncio.gather(*(run_async(chain(("p", "prompt", {"template": f"{i}"})))
                                      for i in range(20)))
        return [r.result.output for r in runs]

    assert asyncio.run(main()) == [str(i) for i in range(20)]


def test_it_runs_a_node_without_inbound_edges_on_empty_text() -> None:
    g = graph([("input", "input"), ("lone", "prompt", {"template": "[{input}]"}),
               ("j", "join"), ("output", "output")], ["input>j", "lone>j", "j>output"])
    done = run(g, "x")
    assert json.loads(done.result.output or "") == {"input": "x", "lone": "[]"}
