"""Model backends: the mock, and `openai` against a real streaming server on loopback."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from engine_http_kit import json_answer, serve
from engine_kit import chain, run

from runner.backends import make_backend
from runner.backends.mock import MockBackend
from runner.backends.openai import OpenAIBackend
from runner.request import LLMConfig


def test_it_replies_like_the_documented_mock() -> None:
    deltas: list[str] = []

    async def on_delta(text: str) -> None:
        deltas.append(text)

    messages = [{"role": "system", "content": "be kind"},
                {"role": "user", "content": "first question"},
                {"role": "assistant", "content": "an answer"},
                {"role": "user", "content": "the  last one"}]
    completion = asyncio.run(MockBackend().complete(messages, on_delta))
    assert completion.text == "mock: the  last one"
    assert deltas == ["mock: ", "the  ", "last ", "one"]
    assert completion.tokens == (2 + 2 + 2 + 3) + 4
    assert MockBackend.can_judge is False


@pytest.mark.parametrize(("name", "kind"), [("mock", MockBackend), ("", MockBackend),
                                            ("openai", OpenAIBackend)])
def test_it_picks_the_backend_from_config(name: str, kind: type) -> None:
    assert isinstance(make_backend(LLMConfig(backend=name)), kind)


def test_it_fails_model_nodes_on_an_unknown_backend() -> None:
    done = run(chain(("m", "model")), llm=LLMConfig(backend="carrier-pigeon"))
    assert "carrier-pigeon" in done.terminal["error"]["message"]


def sse(*chunks: dict[str, Any], delay: float = 0.0, done: bool = True) -> Iterator[bytes]:
    for chunk in chunks:
        if delay:
            time.sleep(delay)
        yield f"data: {json.dumps(chunk)}\n\n".encode()
    if done:
        yield b"data: [DONE]\n\n"


def openai_route(method: str, path: str, headers: dict[str, str], body: Any
                 ) -> tuple[int, dict[str, str], Iterator[bytes]]:
    last = body["messages"][-1]["content"]
    if last == "server error":
        return json_answer(503, {"error": {"message": "overloaded"}})
    if last == "forbidden":
        return json_answer(403, {"error": {"message": "no"}})
    if last == "not streaming":
        return json_answer(200, {"choices": [{"message": {"content": "whole answer"}}],
                                 "usage": {"total_tokens": 11}})
    words = ["Hello", " from", " the", " server", "."]
    chunks: list[dict[str, Any]] = [{"choices": [{"delta": {"role": "assistant"}}]}]
    chunks += [{"choices": [{"delta": {"content": w}}]} for w in words]
    if last != "no usage":
        chunks.append({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 5,
                                                "total_tokens": 12}})
    return 200, {"Content-Type": "text/event-stream"}, sse(*chunks, delay=0.05)


def openai_config(base: str) -> LLMConfig:
    return LLMConfig(backend="openai", model="tiny-chat", base_url=base + "/v1",
                     api_key="sk-test-0123456789abcdefgh", read_timeout=5)


def test_it_streams_from_an_openai_compatible_server() -> None:
    with serve(openai_route) as (base, seen):
        done = run(chain(("m", "model", {"system": "Be brief."})), "hi there",
                   llm=openai_config(base))
    assert done.result.output == "Hello from the server."
    assert done.completed("m")["usage"] == {"tokens": 12}
    assert done.result.usage == {"tokens": 12}
    deltas = [d["delta"] for d in done.of("node.delta", "m")]
    assert "".join(deltas) == "Hello from the server."
    assert len(deltas) >= 4, "streamed piece by piece"
    request = seen[0]
    assert (request["method"], request["path"]) == ("POST", "/v1/chat/completions")
    assert request["headers"]["authorization"] == "Bearer sk-test-0123456789abcdefgh"
    assert request["body"] == {
        "model": "tiny-chat", "stream": True, "stream_options": {"include_usage": True},
        "messages": [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "hi there"}],
    }


def test_it_delivers_deltas_while_the_server_is_still_streaming() -> None:
    arrivals: list[tuple[str, float]] = []

    async def go(base: str) -> None:
        async def on_delta(text: str) -> None:
            arrivals.append((text, time.monotonic()))

        await OpenAIBackend(openai_config(base)).complete(
            [{"role": "user", "content": "x"}], on_delta)

    with serve(openai_route) as (base, _seen):
        asyncio.run(go(base))
    assert arrivals[-1][1] - arrivals[0][1] > 0.1  # 5 chunks 50 ms apart, not one burst


@pytest.mark.parametrize(("text", "output", "tokens"), [
    ("no usage", "Hello from the server.", 2 + 4),  # counted like the mock
    ("not streaming", "whole answer", 11),
])
def test_it_handles_servers_without_usage_or_streaming(text: str, output: str,
                                                        tokens: int) -> None:
    with serve(openai_route) as (base, _seen):
        done = run(chain(("m", "model")), text, llm=openai_config(base))
    assert done.result.output == output
    assert done.result.usage == {"tokens": tokens}


@pytest.mark.parametrize(("text", "code", "attempts"), [
    ("server error", "resource_unavailable", 2),  # retried once (model: 1 retry)
    ("forbidden", "resource_denied", 1),
])
def test_it_maps_server_errors(text: str, code: str, attempts: int) -> None:
    with serve(openai_route) as (base, seen):
        done = run(chain(("m", "model")), text, llm=openai_config(base))
    assert done.terminal["error"]["code"] == code
    assert len(seen) == attempts


def test_it_reports_an_unreachable_server_as_unavailable() -> None:
    with serve(openai_route) as (base, _seen):
        pass  # the port is closed again
    done = run(chain(("m", "model")), llm=openai_config(base))
    assert done.terminal["error"]["code"] == "resource_unavailable"
    assert "sk-test" not in json.dumps(done.events)


def test_it_cancels_while_waiting_on_the_server() -> None:
    from runner.engine import run_graph
    from runner.inmemory_resources import InMemoryResources
    from runner.request import RunRequest

    def slow_route(method: str, path: str, headers: dict[str, str], body: Any
                   ) -> tuple[int, dict[str, str], Iterator[bytes]]:
        chunks = [{"choices": [{"delta": {"content": f"w{i} "}}]} for i in range(40)]
        return 200, {"Content-Type": "text/event-stream"}, sse(*chunks, delay=0.05)

    async def go(base: str) -> tuple[list[dict[str, Any]], float]:
        cancel = asyncio.Event()
        events: list[dict[str, Any]] = []

        def emit(event: dict[str, Any]) -> None:
            events.append(event)
            if event["type"] == "node.delta":
                cancel.set()

        started = time.monotonic()
        await run_graph(RunRequest(graph=chain(("m", "model")), input="x",
                                   llm=openai_config(base)),
                        resources=InMemoryResources(), emit=emit, cancel=cancel)
        return events, time.monotonic() - started

    with serve(slow_route) as (base, _seen):
        events, elapsed = asyncio.run(go(base))
    assert events[-1]["type"] == "run.cancelled"
    assert elapsed < 1.5  # not the 2 s the whole stream takes
