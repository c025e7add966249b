"""Every component's happy path and every output port, with the mock backend and
in-memory resources."""

from __future__ import annotations

import json
from typing import Any

import pytest
from engine_kit import chain, graph, run

from runner.inmemory_resources import InMemoryResources

DOCS = [
    {"text": "Refunds take five days."},
    {"text": "Shipping is free."},
    {"text": "Refunds need a receipt."},
]


def test_it_passes_the_input_to_the_output() -> None:
    done = run(chain(), "hello there")
    assert done.result.status == "completed"
    assert done.result.output == "hello there"
    assert done.terminal == {**done.terminal, "type": "run.completed", "output": "hello there"}
    assert done.types() == [
        "run.started", "node.started", "node.completed", "node.started", "node.completed",
        "run.completed",
    ]


@pytest.mark.parametrize(
    ("template", "text", "expected"),
    [
        ("Q: {input}", "hello", "Q: hello"),
        ("{input} and {input}", "x", "x and x"),
        # Substituted once and literally: {input} inside the value stays as it is.
        ("<{input}>", "{input}", "<{input}>"),
        ("a {input} b {input}", "{input}{input}", "a {input}{input} b {input}{input}"),
        # Nothing else in the template is interpreted.
        ("{0} {x} {input!r} {{input}}", "v", "{0} {x} {input!r} {v}"),
        ("no placeholder", "ignored", "no placeholder"),
    ],
)
def test_it_substitutes_prompt_templates_once(template: str, text: str, expected: str) -> None:
    assert run(chain(("p", "prompt", {"template": template})), text).result.output == expected


def test_it_asks_the_platform_model_through_the_backend() -> None:
    done = run(chain(("m", "model", {"model": "llm", "system": "Be brief."})), "where is it")
    assert done.result.output == "mock: where is it"
    completed = done.completed("m")
    assert completed["text"] == "mock: where is it"
    assert completed["port"] == "out"
    # Tokens: words of the prompt (system + user) plus words of the reply.
    assert completed["usage"] == {"tokens": 2 + 3 + 4}
    assert done.result.usage == {"tokens": 9}
    assert done.terminal["usage"] == {"tokens": 9}
    deltas = done.of("node.delta", "m")
    assert "".join(d["delta"] for d in deltas) == "mock: where is it"
    assert [d["delta_index"] for d in deltas] == list(range(len(deltas)))
    assert [d["delta"] for d in deltas] == ["mock: ", "where ", "is ", "it"]


def test_it_asks_a_kionga_model_through_predict() -> None:
    resources = InMemoryResources(models={"m-42": lambda messages: "predicted!"})
    done = run(chain(("m", "model", {"model": "m-42", "system": "sys"})), "hi",
               resources=resources)
    assert done.result.output == "predicted!"
    assert resources.calls == [("models/m-42/predict", {"messages": [
        {"role": "system", "content": "sys"}, {"role": "user", "content": "hi"}]})]
    assert done.completed("m")["text"] == "predicted!"


def test_it_invokes_a_tool_when_side_effects_are_allowed() -> None:
    resources = InMemoryResources(functions={"lookup": lambda value: {"got": value, "n": 1}})
    done = run(chain(("t", "tool", {"tool": "lookup"})), "order 7", resources=resources,
               allow_side_effects=True)
    assert done.result.output == '{"got":"order 7","n":1}'
    assert resources.calls == [("functions/lookup/invoke", {"input": "order 7"})]


def test_it_calls_an_api_connection_with_its_request() -> None:
    def api(method: str, path: str, body: Any) -> tuple[int, Any]:
        return 201, {"method": method, "path": path, "body": body}

    resources = InMemoryResources(connections={"conn-1": api})
    done = run(chain(("a", "api", {"connection": "conn-1", "request": "PUT /tickets/9"})),
               "update", resources=resources, allow_side_effects=True)
    assert json.loads(done.result.output or "") == {
        "method": "PUT", "path": "/tickets/9", "body": "update"}


def test_it_searches_a_knowledge_base_with_its_query_and_limit() -> None:
    resources = InMemoryResources(knowledge={"kb-1": DOCS})
    done = run(chain(("k", "knowledge", {"knowledge_base": "kb-1", "query": "{input} refunds",
                                         "limit": "2"})), "receipt", resources=resources)
    assert resources.calls == [("knowledge-bases/kb-1/search",
                                {"query": "receipt refunds", "limit": 2})]
    # documents → text: the texts joined by blank lines.
    assert done.result.output == "Refunds need a receipt.\n\nRefunds take five days."


def test_it_defaults_the_knowledge_query_and_limit() -> None:
    resources = InMemoryResources(knowledge={"kb-1": DOCS * 3})
    run(chain(("k", "knowledge", {"knowledge_base": "kb-1"})), "x", resources=resources)
    assert resources.calls[0][1] == {"query": "x", "limit": 4}


def test_it_reads_a_storage_object_by_key() -> None:
    resources = InMemoryResources(datasets={"ds-1": {"faq/hello": "Stored answer."}})
    done = run(chain(("s", "storage", {"dataset": "ds-1", "key": "faq/{input}"})), "hello",
               resources=resources)
    assert done.result.output == "Stored answer."
    assert resources.calls == [("datasets/ds-1/object", {"key": "faq/hello"})]


def test_it_runs_a_storage_node_without_an_input_edge() -> None:
    resources = InMemoryResources(datasets={"ds-1": {"fixed": "On its own."}})
    g = graph([("input", "input"), ("s", "storage", {"dataset": "ds-1", "key": "fixed"}),
               ("output", "output")], ["s>output"])
    done = run(g, resources=resources)
    assert done.result.output == "On its own."
    assert done.ran() == ["input", "s", "output"]


@pytest.mark.parametrize(("text", "port"), [("I want a refund", "true"), ("hello", "false")])
def test_it_fires_one_condition_port(text: str, port: str) -> None:
    g = graph(
        [("input", "input"), ("c", "condition", {"expression": "contains:refund"}),
         ("yes", "prompt", {"template": "YES {input}"}), ("no", "prompt", {"template": "NO"}),
         ("output", "output")],
        ["input>c", "c.true>yes", "c.false>no", "yes>output", "no>output"],
    )
    done = run(g, text)
    assert done.completed("c")["port"] == port
    assert done.completed("c")["preview"] == text
    assert done.skipped() == (["no"] if port == "true" else ["yes"])
    assert done.result.output == (f"YES {text}" if port == "true" else "NO")


ROUTER = {"route_1": "contains:refund", "route_2": "contains:invoice",
          "route_3": "matches:^\\d+$", "route_4": "longer_than:30"}


@pytest.mark.parametrize(
    ("text", "port"),
    [
        ("refund my invoice", "route_1"),  # checked in order: the first true wins
        ("an invoice", "route_2"),
        ("12345", "route_3"),
        ("a very long message without keywords", "route_4"),
        ("hi", "default"),
    ],
)
def test_it_fires_exactly_one_router_port(text: str, port: str) -> None:
    ports = [*ROUTER, "default"]
    nodes: list[Any] = [("input", "input"), ("r", "router", ROUTER), ("output", "output")]
    nodes += [(f"to-{p.replace('_', '')}", "prompt", {"template": p}) for p in ports]
    edges = ["input>r"] + [f"r.{p}>to-{p.replace('_', '')}" for p in ports]
    edges += [f"to-{p.replace('_', '')}>output" for p in ports]
    done = run(graph(nodes, edges), text)
    assert done.completed("r")["port"] == port
    assert done.result.output == port
    assert len(done.skipped()) == 4


def test_it_routes_to_default_when_only_some_routes_are_configured() -> None:
    g = graph([("input", "input"), ("r", "router", {"route_1": "equals:x"}),
               ("output", "output")], ["input>r", "r.default>output"])
    assert run(g, "y").completed("r")["port"] == "default"


@pytest.mark.parametrize(
    ("config", "history", "expected"),
    [
        ({}, [{"role": "user", "content": f"t{i}"} for i in range(8)],
         [f"t{i}" for i in range(2, 8)] + ["now"]),
        ({"turns": "2"}, [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                          {"role": "user", "content": "c"}], ["b", "c", "now"]),
        ({"strategy": "none"}, [{"role": "user", "content": "a"}], ["now"]),
        ({"turns": "3"}, [], ["now"]),
    ],
)
def test_it_keeps_a_window_of_memory(config: dict[str, str], history: list[Any],
                                     expected: list[str]) -> None:
    g = graph([("input", "input"), ("mem", "memory", config), ("j", "join"),
               ("output", "output")], ["input>mem", "mem>j", "j>output"])
    done = run(g, "now", history=history, session_id="s-1")
    chat = json.loads(done.result.output or "")["mem"]
    assert [turn["content"] for turn in chat] == expected
    assert chat[-1] == {"role": "user", "content": "now"}


def test_it_feeds_memory_chat_to_a_model() -> None:
    g = chain(("mem", "memory"), ("m", "model"))
    done = run(g, "latest", history=[{"role": "user", "content": "old"}])
    assert done.result.output == "mock: latest"


@pytest.mark.parametrize(
    ("text", "path", "missing", "status", "output"),
    [
        ('{"items": [{"name": "Ada"}]}', "items.0.name", "fail", "completed", '"Ada"'),
        ('{"a": {"b": [1, [2, 3]]}}', "a.b.1.0", "fail", "completed", "2"),
        ('[{"x": true}]', "0.x", "fail", "completed", "true"),
        ('{"a": {"b": 1}}', "a", "fail", "completed", '{"b":1}'),
        ("plain text", "input", "fail", "completed", '"plain text"'),  # text → {"input": text}
        ('{"a": 1}', "b", "fail", "failed", None),
        ('{"a": [1]}', "a.3", "fail", "failed", None),
        ('{"a": [1]}', "a.x", "empty", "completed", "null"),
        ('{"a": "s"}', "a.0", "empty", "completed", "null"),
    ],
)
def test_it_extracts_by_dotted_path(text: str, path: str, missing: str, status: str,
                                    output: str | None) -> None:
    done = run(chain(("x", "extract", {"path": path, "missing": missing})), text)
    assert done.result.status == status
    assert done.result.output == output
    if status == "failed":
        assert done.terminal["node_id"] == "x"
        assert done.terminal["error"]["code"] == "node_error"


def test_it_joins_values_keyed_by_source_node() -> None:
    g = graph([("input", "input"), ("b", "prompt", {"template": "B {input}"}),
               ("a", "prompt", {"template": "A {input}"}), ("j", "join"), ("output", "output")],
              ["input>b", "input>a", "b>j", "a>j", "j>output"])
    done = run(g, "x")
    assert json.loads(done.result.output or "") == {"a": "A x", "b": "B x"}
    assert list(json.loads(done.result.output or "")) == ["a", "b"]  # source id order


@pytest.mark.parametrize(("require", "ran"), [("any", True), ("all", False)])
def test_it_joins_any_or_all(require: str, ran: bool) -> None:
    g = graph([("input", "input"), ("c", "condition", {"expression": "contains:x"}),
               ("j", "join", {"require": require}), ("output", "output")],
              ["input>c", "c.true>j", "c.false>j", "j>output"])
    done = run(g, "x")
    assert ("j" in done.skipped()) is not ran
    assert done.result.output == ('{"c":"x"}' if ran else None)


def test_it_joins_all_when_every_edge_carried_a_value() -> None:
    g = graph([("input", "input"), ("a", "prompt", {"template": "1"}),
               ("b", "prompt", {"template": "2"}), ("j", "join", {"require": "all"}),
               ("output", "output")], ["input>a", "input>b", "a>j", "b>j", "j>output"])
    assert run(g).result.output == '{"a":"1","b":"2"}'


@pytest.mark.parametrize(
    ("decision", "port", "reason", "value"),
    [
        (("approve", "fine"), "approved", "approved", "please ship"),
        (("reject", "too risky"), "rejected", "rejected", "too risky"),
    ],
)
def test_it_waits_for_an_approval_decision(decision: tuple[str, str], port: str, reason: str,
                                           value: str) -> None:
    resources = InMemoryResources(auto_decision=decision)
    g = graph([("input", "input"), ("ok", "approval", {"message": "Ship {input}?"}),
               ("output", "output")], ["input>ok", f"ok.{port}>output"])
    done = run(g, "please ship", resources=resources)
    requested = done.one("approval.requested", "ok")
    resolved = done.one("approval.resolved", "ok")
    assert requested["approval_id"] == resolved["approval_id"] == "apr-1"
    assert resolved["port"] == port and resolved["reason"] == reason
    assert done.completed("ok")["port"] == port
    assert done.result.output == value
    assert resources.approvals["apr-1"]["message"] == "Ship please ship?"
    assert resources.approvals["apr-1"]["timeout_seconds"] == 120
    assert done.types("ok") == ["node.started", "approval.requested", "approval.resolved",
                                "node.completed"]
