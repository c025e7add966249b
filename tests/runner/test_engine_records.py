"""Node records: one per node attempt, with inputs, output, port, error, time and tokens,
redacted and bounded; and a re-run that repeats recorded outcomes without calling."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from engine_kit import Run, chain, graph

from runner.engine import run_graph
from runner.inmemory_resources import InMemoryResources
from runner.records import VALUE_BYTES, Reused
from runner.request import RunRequest

SECRET = "s3cr3t-Value-42"


def recorded(g: dict[str, Any], text: str = "hello", *, resources: InMemoryResources,
             **request: Any) -> tuple[Run, list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    records: list[dict[str, Any]] = []
    request.setdefault("retry_delay_seconds", 0.0)
    result = asyncio.run(run_graph(RunRequest(graph=g, input=text, **request),
                                   resources=resources, emit=events.append,
                                   record=records.append))
    return Run(result, events), records


def two_models() -> dict[str, Any]:
    return chain(("p", "prompt", {"template": "Say {input}"}),
                 ("m1", "model", {"model": "first"}), ("m2", "model", {"model": "second"}))


def counting() -> InMemoryResources:
    return InMemoryResources(models={"first": lambda m: "one two",
                                     "second": lambda m: "three " + m[-1]["content"]})


def test_it_records_every_node_with_its_inputs_output_time_and_tokens() -> None:
    done, records = recorded(two_models(), resources=counting())
    assert done.result.status == "completed"
    by_node = {r["node_id"]: r for r in records}
    assert list(by_node) == ["input", "p", "m1", "m2", "output"]
    m1 = by_node["m1"]
    assert m1["status"] == "completed" and m1["attempt"] == 1 and m1["kind"] == "model"
    assert m1["inputs"] == [{"source": "p", "type": "text", "value": "Say hello",
                             "truncated": False, "redacted": False}]
    assert m1["output"] == {"port": "out", "type": "text", "value": "one two",
                            "truncated": False, "redacted": False}
    assert m1["usage"]["tokens"] == done.completed("m1")["usage"]["tokens"] > 0
    assert m1["duration_ms"] >= 0 and m1["started_at"] <= m1["ended_at"]
    assert by_node["output"]["output"]["value"] == done.result.output == "three one two"
    # Records are not events: the event stream is what it was.
    assert all("inputs" not in e for e in done.events)


def test_it_records_each_attempt_and_the_failure() -> None:
    resources = counting()
    resources.fail_next("models/first/predict", "resource_unavailable", times=1)
    done, records = recorded(two_models(), resources=resources)
    assert done.result.status == "completed"
    attempts = [(r["attempt"], r["status"]) for r in records if r["node_id"] == "m1"]
    assert attempts == [(1, "failed"), (2, "completed")]
    failed = next(r for r in records if r["node_id"] == "m1" and r["status"] == "failed")
    assert failed["error"]["code"] == "resource_unavailable" and failed["output"] is None

    resources = counting()
    resources.fail_next("models/second/predict", "resource_denied")
    done, records = recorded(two_models(), resources=resources)
    assert done.result.status == "failed"
    last = records[-1]
    assert (last["node_id"], last["status"], last["error"]["code"]) == (
        "m2", "failed", "resource_denied")


def test_no_secret_reaches_a_record_and_a_redacted_value_says_so() -> None:
    resources = InMemoryResources(models={"first": lambda m: f"the key is {SECRET}",
                                          "second": "fine"})
    done, records = recorded(two_models(), f"mine is {SECRET}", resources=resources,
                             secrets=[SECRET])
    assert done.result.status == "completed"
    assert SECRET not in json.dumps(records)
    m1 = next(r for r in records if r["node_id"] == "m1")
    assert m1["output"]["redacted"] is True and "[redacted]" in m1["output"]["value"]


def test_a_value_past_the_limit_is_cut_and_flagged() -> None:
    big = "word " * (VALUE_BYTES // 4)
    resources = InMemoryResources(models={"first": big, "second": "ok"})
    _done, records = recorded(two_models(), resources=resources)
    m1 = next(r for r in records if r["node_id"] == "m1")
    assert m1["output"]["truncated"] is True
    assert len(m1["output"]["value"].encode()) <= VALUE_BYTES


def test_a_rerun_repeats_recorded_outputs_without_calling() -> None:
    resources = counting()
    _first, records = recorded(two_models(), resources=resources)
    reuse = {r["node_id"]: Reused(r["output"]["port"], r["output"]["value"], "run-1")
             for r in records if r["node_id"] in ("input", "p", "m1")}
    calls = len(resources.calls)
    again, rerecords = recorded(two_models(), resources=resources, reuse=reuse)
    assert again.result.status == "completed" and again.result.output == "three one two"
    assert [c[0] for c in resources.calls[calls:]] == ["models/second/predict"]
    m1 = again.completed("m1")
    assert m1["usage"] == {"tokens": 0} and m1["reason"] == "reused"
    assert again.terminal["usage"]["tokens"] == again.completed("m2")["usage"]["tokens"]
    statuses = {r["node_id"]: (r["status"], r["reused_from"]) for r in rerecords}
    assert statuses["m1"] == ("reused", "run-1") and statuses["m2"] == ("completed", None)


def test_a_reused_value_is_what_the_nodes_after_it_get() -> None:
    g = graph([("input", "input"), ("p", "prompt", {"template": "x {input}"}),
               ("output", "output")], ["input>p", "p>output"])
    done, _ = recorded(g, resources=counting(), reuse={"p": Reused("out", "kept", "r")})
    assert done.result.output == "kept"
