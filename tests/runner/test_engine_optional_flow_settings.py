"""Storage without a dataset and a loop without a subflow run, as the reference leaves
both settings optional: storage passes on an empty list of documents, a loop passes its
input through (the validator's warning says so: missing_optional_config)."""

from __future__ import annotations

import pytest
from engine_kit import graph, run

from runner.inmemory_resources import InMemoryResources


def test_storage_without_a_dataset_passes_on_no_documents() -> None:
    resources = InMemoryResources(datasets={"ds-1": {"hello": "Stored."}})
    g = graph([("input", "input"), ("s", "storage", {"key": "{input}"}),
               ("p", "prompt", {"template": "[{input}]"}), ("output", "output")],
              ["input>s", "s>p", "p>output"])
    done = run(g, "hello", resources=resources)
    assert done.result.status == "completed"
    assert done.completed("s")["port"] == "out"
    assert done.result.output == "[]"  # no documents: an empty text
    assert resources.calls == []


def loop(config: dict[str, str]) -> dict[str, object]:
    return graph([("input", "input"), ("l", "loop", config),
                  ("done", "prompt", {"template": "out: {input}"}),
                  ("gave-up", "prompt", {"template": "exhausted: {input}"}),
                  ("output", "output")],
                 ["input>l", "l>done", "l.exhausted>gave-up", "done>output",
                  "gave-up>output"])


@pytest.mark.parametrize(("until", "output"), [
    ("", "out: ping"),
    ("contains:ping", "out: ping"),
    ("contains:pong", "exhausted: ping"),
])
def test_a_loop_without_a_subflow_passes_its_input_through(until: str, output: str) -> None:
    done = run(loop({"until": until, "max_iterations": "5"}), "ping")
    assert done.result.status == "completed" and done.result.output == output
    assert done.completed("l")["iterations"] == 0
