"""Failures: error ports, retries, timeouts, budgets and side effects."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from engine_kit import chain, graph, run

from runner.backends import Completion, Messages, OnDelta
from runner.backends.mock import MockBackend
from runner.inmemory_resources import InMemoryResources


class FlakyBackend:
    """Fails the first `failures` calls with an exception, then answers like the mock."""

    name = "flaky"
    can_judge = False

    def __init__(self, failures: int, exc: Exception | None = None) -> None:
        self.failures = failures
        self.calls = 0
        self.exc = exc or RuntimeError("backend hiccup")

    async def complete(self, messages: Messages, on_delta: OnDelta) -> Completion:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.exc
        return await MockBackend().complete(messages, on_delta)


class SlowBackend:
    name = "slow"
    can_judge = False

    async def complete(self, messages: Messages, on_delta: OnDelta) -> Completion:
        await asyncio.sleep(10)
        return Completion("late", 1)


# kind, config, the resource path it calls, resources that would answer
RESOURCE_NODES: list[tuple[str, dict[str, str], str]] = [
    ("model", {"model": "m-1"}, "models/m-1/predict"),
    ("tool", {"tool": "fn"}, "functions/fn/invoke"),
    ("api", {"connection": "c-1"}, "agent-api-connections/c-1/invoke"),
    ("knowledge", {"knowledge_base": "kb-1"}, "knowledge-bases/kb-1/search"),
    ("storage", {"dataset": "ds-1", "key": "k"}, "datasets/ds-1/object"),
]


def full_resources() -> InMemoryResources:
    return InMemoryResources(
        models={"m-1": "model says"}, functions={"fn": {"ok": True}},
        connections={"c-1": {"ok": True}}, knowledge={"kb-1": [{"text": "doc"}]},
        datasets={"ds-1": {"k": "object"}},
    )


def with_error_port(kind: str, config: dict[str, str]) -> dict[str, Any]:
    return graph(
        [("input", "input"), ("n", kind, config), ("after", "prompt", {"template": "ok {input}"}),
         ("handle", "prompt", {"template": "handled: {input}"}), ("output", "output")],
        ["input>n", "n>after", "n.error>handle", "after>output", "handle>output"],
    )


@pytest.mark.parametrize(("kind", "config", "path"), RESOURCE_NODES)
@pytest.mark.parametrize("code", ["resource_denied", "resource_unavailable", "node_error"])
def test_it_sends_failures_down_the_error_port(kind: str, config: dict[str, str], path: str,
                                               code: str) -> None:
    resources = full_resources()
    resources.fail_next(path, code, f"boom from {path}", times=5)
    done = run(with_error_port(kind, config), resources=resources, allow_side_effects=True)
    failed = done.one("node.failed", "n")
    assert failed["error"] == {"code": code, "message": f"boom from {path}"}
    assert failed["port"] == "error"
    assert done.skipped() == ["after"]  # fed only by the out port
    assert done.result.status == "completed"
    assert done.result.output == f"handled: boom from {path}"


@pytest.mark.parametrize(("kind", "config", "path"), RESOURCE_NODES)
def test_it_fails_the_run_when_no_error_port_is_connected(kind: str, config: dict[str, str],
                                                          path: str) -> None:
    resources = full_resources()
    resources.fail_next(path, "resource_denied", "not yours")
    done = run(chain(("n", kind, config)), resources=resources, allow_side_effects=True)
    assert done.result.status == "failed"
    assert done.terminal["type"] == "run.failed"
    assert done.terminal["node_id"] == "n"
    assert done.terminal["reason"] == "node_failed"
    assert done.terminal["error"] == {"code": "resource_denied", "message": "not yours"}
    assert "port" not in done.one("node.failed", "n")
    assert done.result.node_id == "n"


@pytest.mark.parametrize(
    ("kind", "config", "path", "retries"),
    [(k, c, p, {"model": 1, "knowledge": 1, "storage": 1}.get(k, 0)) for k, c, p in RESOURCE_NODES],
)
def test_it_retries_what_the_registry_allows(kind: str, config: dict[str, str], path: str,
                                             retries: int) -> None:
    resources = full_resources()
    resources.fail_next(path, "resource_unavailable", "try later", times=retries)
    done = run(chain(("n", kind, config)), resources=resources, allow_side_effects=True)
    assert done.result.status == "completed"
    retrying = done.of("node.retrying", "n")
    assert [e["attempt"] for e in retrying] == list(range(2, 2 + retries))
    assert all(e["error"]["code"] == "resource_unavailable" for e in retrying)
    assert sum(1 for call in resources.calls if call[0] == path) == retries + 1
    assert done.result.steps == 3  # a retried node is still one step


def test_it_gives_up_after_the_last_retry() -> None:
    resources = full_resources()
    resources.fail_next("knowledge-bases/kb-1/search", "node_error", "bad", times=2)
    done = run(chain(("n", "knowledge", {"knowledge_base": "kb-1"})), resources=resources)
    assert [e["attempt"] for e in done.of("node.retrying")] == [2]
    assert done.terminal["error"]["code"] == "node_error"


@pytest.mark.parametrize("code", ["resource_denied", "side_effects_not_allowed"])
def test_it_never_retries_other_failures(code: str) -> None:
    resources = full_resources()
    resources.fail_next("models/m-1/predict", code, "no")
    done = run(chain(("n", "model", {"model": "m-1"})), resources=resources)
    assert done.of("node.retrying") == []
    assert done.terminal["error"]["code"] == code


@pytest.mark.allow_output  # an unexpected exception is logged with its traceback
def test_it_retries_an_exception_in_the_model_backend() -> None:
    backend = FlakyBackend(1)
    done = run(chain(("m", "model")), "hi", backend=backend)
    assert backend.calls == 2
    assert done.one("node.retrying", "m")["error"] == {
        "code": "node_error", "message": "RuntimeError: backend hiccup"}
    assert done.result.output == "mock: hi"


def test_it_times_out_a_node_and_retries_it() -> None:
    started = time.monotonic()
    done = run(chain(("m", "model")), backend=SlowBackend(), node_timeouts={"model": 0.05})
    assert time.monotonic() - started < 2
    assert done.one("node.retrying", "m")["error"]["code"] == "timeout"
    assert done.terminal["error"]["code"] == "timeout"
    assert done.terminal["node_id"] == "m"
    assert done.terminal["reason"] == "node_failed"


def test_it_sends_a_timeout_down_the_error_port() -> None:
    g = with_error_port("model", {"model": "llm"})
    done = run(g, backend=SlowBackend(), node_timeouts={"model": 0.05})
    assert done.one("node.failed", "n")["error"]["code"] == "timeout"
    assert done.result.output is not None and done.result.output.startswith("handled: model")


@pytest.mark.parametrize("kind", ["tool", "api"])
def test_it_refuses_side_effects_unless_allowed(kind: str) -> None:
    config = {"tool": "fn"} if kind == "tool" else {"connection": "c-1"}
    resources = full_resources()
    refused = run(chain(("n", kind, config)), resources=resources)
    assert refused.terminal["error"]["code"] == "side_effects_not_allowed"
    assert refused.terminal["node_id"] == "n"
    assert resources.calls == []  # never reached the resource
    handled = run(with_error_port(kind, config), resources=resources)
    assert handled.one("node.failed", "n")["error"]["code"] == "side_effects_not_allowed"
    assert handled.result.output is not None and handled.result.output.startswith("handled:")
    allowed = run(chain(("n", kind, config)), resources=resources, allow_side_effects=True)
    assert allowed.result.output == '{"ok":true}'


def test_it_fails_the_run_when_max_steps_is_exceeded() -> None:
    prompts = [(f"p{i}", "prompt", {"template": "{input}."}) for i in range(5)]
    done = run(chain(*prompts, settings={"max_steps": 4}))
    assert done.terminal["reason"] == "budget_exceeded"
    assert done.terminal["budget"] == "max_steps"
    assert done.terminal["error"]["code"] == "budget_exceeded"
    assert "max_steps" in done.terminal["error"]["message"]
    assert len(done.ran()) == 4
    ok = run(chain(*prompts, settings={"max_steps": 7}))
    assert ok.result.status == "completed"


def test_it_does_not_count_skipped_nodes_as_steps() -> None:
    g = graph([("input", "input"), ("c", "condition", {"expression": "empty"}),
               ("a", "prompt", {"template": "a"}), ("b", "prompt", {"template": "b"}),
               ("output", "output")],
              ["input>c", "c.true>a", "a>b", "b>output", "c.false>output"],
              settings={"max_steps": 3})
    done = run(g, "text")
    assert done.result.status == "completed"
    assert done.skipped() == ["a", "b"]


def test_it_fails_the_run_when_max_tokens_is_exceeded() -> None:
    # 2 input words + 3 reply words = 5 tokens per model node.
    g = chain(("m1", "model"), ("m2", "model"), settings={"max_tokens": 12})
    done = run(g, "two words")
    assert done.completed("m1")["usage"] == {"tokens": 5}
    assert done.completed("m2")["usage"] == {"tokens": 7}
    assert done.result.status == "completed"  # at the limit is not over it
    assert done.result.usage == {"tokens": 12}
    over = run(chain(("m1", "model"), ("m2", "model"), settings={"max_tokens": 11}), "two words")
    assert over.terminal["reason"] == "budget_exceeded"
    assert over.terminal["budget"] == "max_tokens"
    assert over.terminal["usage"] == {"tokens": 12}
    assert "output" not in over.ran()


def test_it_fails_the_run_when_timeout_seconds_is_exceeded() -> None:
    started = time.monotonic()
    done = run(chain(("m", "model"), settings={"timeout_seconds": 1}), backend=SlowBackend())
    assert 0.9 < time.monotonic() - started < 3
    assert done.terminal["type"] == "run.failed"
    assert done.terminal["reason"] == "timeout"
    assert done.terminal["error"]["code"] == "timeout"
    assert "node_id" not in done.terminal
    assert done.result.status == "failed"


def test_it_fails_on_a_bad_setting_value() -> None:
    done = run(chain(("k", "knowledge", {"knowledge_base": "kb-1", "limit": "99"})),
               resources=full_resources())
    assert done.terminal["error"]["code"] == "node_error"
    assert "limit" in done.terminal["error"]["message"]


def test_it_fails_an_api_node_on_an_upstream_error_status() -> None:
    resources = InMemoryResources(connections={"c-1": lambda m, p, b: (502, {"e": 1})})
    done = run(chain(("a", "api", {"connection": "c-1", "request": "GET /x"})),
               resources=resources, allow_side_effects=True)
    assert done.terminal["error"] == {"code": "node_error", "message": "GET /x answered 502"}


@pytest.mark.allow_output  # the crash is logged with its traceback
def test_it_fails_a_node_whose_task_crashes_outside_the_component(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from runner import scheduler

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("no context")

    monkeypatch.setattr(scheduler, "StreamRedactor", broken)
    done = run(chain(("m", "model")))
    assert done.terminal["error"] == {"code": "node_error", "message": "RuntimeError: no context"}
    assert done.terminal["node_id"] == "m"
