"""HttpResources: the documented HTTP calls, against a real server on loopback."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from engine_http_kit import json_answer, serve
from engine_kit import chain, run_async

from runner.http_resources import HttpResources
from runner.resources import ResourceClient, ResourceError

CREDENTIAL = "run-credential-abcdef0123456789"




def gateway(method: str, path: str, headers: dict[str, str], body: Any
            ) -> tuple[int, dict[str, str], Iterator[bytes]]:
    """A fake internal listener answering as runner.resources documents."""
    if headers.get("authorization") != f"Bearer {CREDENTIAL}":
        return json_answer(401, {"error": {"code": "unauthorized", "message": "bad credential"}})
    answers: dict[tuple[str, str], Any] = {
        ("POST", "/api/v1/models/m%2F1/predict"): {"text": "predicted", "usage": {"tokens": 3}},
        ("POST", "/api/v1/functions/lookup/invoke"): {"output": {"got": body}},
        ("POST", "/api/v1/agent-api-connections/c-1/invoke"): {"status": 201, "body": body},
        ("POST", "/api/v1/knowledge-bases/kb-1/search"): {"documents": [{"text": "d1"}]},
        ("GET", "/api/v1/datasets/ds-1/object?key=a+b%2Fc"): {"key": "a b/c", "text": "obj"},
        ("POST", "/api/v1/agent-approvals"): {"id": "apr-9", "status": "pending"},
        ("GET", "/api/v1/agent-approvals/apr-9"): {"id": "apr-9", "status": "approved",
                                                  "comment": "ok"},
        ("GET", "/api/v1/datasets/gone/object?key=k"): (404, "not_found"),
        ("POST", "/api/v1/functions/broken/invoke"): (500, "internal"),
        ("POST", "/api/v1/functions/busy/invoke"): (429, "slow_down"),
        ("POST", "/api/v1/functions/bad/invoke"): (422, "invalid"),
        ("POST", "/api/v1/functions/forbidden/invoke"): (403, "forbidden"),
    }
    answer = answers.get((method, path))
    if answer is None:
        return json_answer(404, {"error": {"code": "not_found", "message": f"no {path}"}})
    if isinstance(answer, tuple):
        status, code = answer
        return json_answer(status, {"error": {"code": code, "message": f"{code} happened"}})
    return json_answer(200, answer)


Call = Callable[[ResourceClient], Awaitable[dict[str, Any]]]

CALLS: list[tuple[Call, dict[str, Any], str, str, Any]] = [
    (lambda c: c.predict("m/1", [{"role": "user", "content": "hi"}]),
     {"text": "predicted", "usage": {"tokens": 3}},
     "POST", "/api/v1/models/m%2F1/predict", {"messages": [{"role": "user", "content": "hi"}]}),
    (lambda c: c.invoke_function("lookup", {"q": 1}), {"output": {"got": {"input": {"q": 1}}}},
     "POST", "/api/v1/functions/lookup/invoke", {"input": {"q": 1}}),
    (lambda c: c.invoke_connection("c-1", "PUT", "/t/1", "x"),
     {"status": 201, "body": {"method": "PUT", "path": "/t/1", "body": "x"}},
     "POST", "/api/v1/agent-api-connections/c-1/invoke",
     {"method": "PUT", "path": "/t/1", "body": "x"}),
    (lambda c: c.search_knowledge("kb-1", "refunds", 3), {"documents": [{"text": "d1"}]},
     "POST", "/api/v1/knowledge-bases/kb-1/search", {"query": "refunds", "limit": 3}),
    (lambda c: c.read_object("ds-1", "a b/c"), {"key": "a b/c", "text": "obj"},
     "GET", "/api/v1/datasets/ds-1/object?key=a+b%2Fc", None),
    (lambda c: c.create_approval("n", "Ship?", "preview", 60), {"id": "apr-9", "status": "pending"},
     "POST", "/api/v1/agent-approvals",
     {"node_id": "n", "message": "Ship?", "preview": "preview", "timeout_seconds": 60}),
    (lambda c: c.get_approval("apr-9"), {"id": "apr-9", "status": "approved", "comment": "ok"},
     "GET", "/api/v1/agent-approvals/apr-9", None),
]


async def call_once(base: str, call: Call, credential: str = CREDENTIAL,
                    timeout: float = 30.0) -> dict[str, Any]:
    client = HttpResources(base + "/api/v1", credential, timeout=timeout)
    try:
        return await call(client)
    finally:
        await client.aclose()


@pytest.mark.parametrize(("call", "answer", "method", "path", "body"), CALLS)
def test_it_makes_the_documented_call(call: Call, answer: dict[str, Any], method: str,
                                      path: str, body: Any) -> None:
    with serve(gateway) as (base, seen):
        assert asyncio.run(call_once(base, call)) == answer
    assert (seen[0]["method"], seen[0]["path"], seen[0]["body"]) == (method, path, body)
    assert seen[0]["headers"]["authorization"] == f"Bearer {CREDENTIAL}"


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda c: c.read_object("gone", "k"), "resource_denied"),  # 404
        (lambda c: c.invoke_function("forbidden", 1), "resource_denied"),  # 403
        (lambda c: c.invoke_function("broken", 1), "resource_unavailable"),  # 500
        (lambda c: c.invoke_function("busy", 1), "resource_unavailable"),  # 429
        (lambda c: c.invoke_function("bad", 1), "node_error"),  # other 4xx
    ],
)
def test_it_maps_http_errors_to_failure_codes(call: Call, code: str) -> None:
    with serve(gateway) as (base, _seen), pytest.raises(ResourceError) as raised:
        asyncio.run(call_once(base, call))
    assert raised.value.code == code
    assert "happened" in raised.value.message


@pytest.mark.allow_output  # each try at the dead gateway is logged
def test_it_maps_a_refused_credential_and_a_dead_gateway() -> None:
    with serve(gateway) as (base, _seen), pytest.raises(ResourceError) as refused:
        asyncio.run(call_once(base, lambda c: c.get_approval("apr-9"), credential="wrong"))
    assert refused.value.code == "resource_denied"
    # A gateway that stays away: tried again until the client's timeout, then unavailable.
    with pytest.raises(ResourceError) as dead:
        asyncio.run(call_once(base, lambda c: c.get_approval("apr-9"), timeout=1.0))
    assert dead.value.code == "resource_unavailable"


def test_it_runs_a_graph_through_the_gateway_and_redacts_the_credential() -> None:
    async def go(base: str) -> Any:
        client = HttpResources(base + "/api/v1/", CREDENTIAL)
        try:
            return await run_async(chain(("t", "tool", {"tool": "lookup"})), f"key {CREDENTIAL}",
                                   resources=client, allow_side_effects=True)
        finally:
            await client.aclose()

    with serve(gateway) as (base, seen):
        done = asyncio.run(go(base))
    assert done.result.output == '{"got":{"input":"key [redacted]"}}'
    assert seen[-1]["body"] == {"input": f"key {CREDENTIAL}"}  # the real value went through
