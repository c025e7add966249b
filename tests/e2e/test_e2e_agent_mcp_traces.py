"""A call to a deployed agent over MCP continues the caller's trace: the official `mcp`
client sends a `traceparent` header with its requests, and the turn its tool call opens
is a `kionga.turn` span, child of that header's span, at the loopback OTLP receiver."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from deployments.models import Agent
from tests.agent_local_helpers import until
from tests.e2e.test_e2e_agent_runtime import (
    caller,
    deployed,  # noqa: F401 (fixture)
    runtime_env,
    start_runtime,
    wait_healthy,
)
from tests.otlp_receiver import OtlpReceiver
from tests.stack import Stack, free_port

pytestmark = pytest.mark.django_db(transaction=True)

CALLER_TRACE = "7" * 32
CALLER_SPAN = "a1b2c3d4e5f60718"



async def call_tool(url: str, headers: dict[str, str]) -> Any:
    async with httpx.AsyncClient(headers=headers, timeout=30) as http, \
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write, _), \
            ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        return await session.call_tool(tools[0].name, {"input": "refunds"})


def test_an_mcp_tool_call_continues_the_callers_trace(
        stack: Stack, deployed: tuple[Agent, Path, str], carol: User,  # noqa: F811
        receiver: OtlpReceiver, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="mcp.client.streamable_http")  # its version line
    agent, artifact, credential = deployed
    port = free_port()
    env = runtime_env(stack, artifact, credential, port)
    env.update(OTEL_EXPORTER_OTLP_ENDPOINT=receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY="100")
    process = start_runtime(env)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, process)
        headers = {**caller(carol, agent),
                   "traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"}
        result = asyncio.run(call_tool(url, headers))
        assert not result.isError, result
        turn_id = result.structuredContent["turn_id"]
        spans = until(lambda: [s for s in receiver.received() if s.name == "kionga.turn"])
    finally:
        process.terminate()
        process.wait(timeout=10)
    [turn] = [s for s in spans if s.name == "kionga.turn"]
    assert turn.attributes["kionga.turn.id"] == turn_id
    assert (turn.trace_id, turn.parent_span_id) == (CALLER_TRACE, CALLER_SPAN)
