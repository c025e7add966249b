"""A running agent runtime answers clients nobody here wrote: the official `openai`
package (models list, chat completions streamed and not, its errors) and the official
`mcp` client over streamable HTTP (one tool: the agent), each with an agent API key."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from django.contrib.auth.models import User
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from deployments.api_keys import do_create_key, do_revoke_key
from deployments.models import Agent, AgentApiKey
from runs.models import Run
from tests.e2e import test_e2e_agent_runtime as running

# The fixtures of a deployed agent and its running runtime.
deployed, runtime = running.deployed, running.runtime
ANSWER = "Refunds are paid within 14 days."


def key_of(user: User, agent: Agent) -> str:
    return str(do_create_key(user, agent, "client", 600, None)["key"])


def test_the_openai_client_lists_the_agent_and_chats_with_it(
        runtime: str, deployed: tuple[Agent, Path, str], carol: User) -> None:
    agent = deployed[0]
    client = openai.OpenAI(base_url=f"{runtime}/v1", api_key=key_of(carol, agent),
                           max_retries=0)
    assert [m.id for m in client.models.list()] == [agent.name]
    messages: Any = [{"role": "system", "content": "Be brief."},
                     {"role": "user", "content": "refunds"}]
    completion = client.chat.completions.create(model=agent.name, messages=messages)
    assert ANSWER in (completion.choices[0].message.content or "")
    assert completion.choices[0].finish_reason == "stop"
    turn = Run.objects.get(pk=completion.id.removeprefix("chatcmpl-"))
    assert (turn.agent_id, turn.status, turn.input) == (agent.pk, "completed", "refunds")

    stream = client.chat.completions.create(model=agent.name, messages=messages, stream=True,
                                            stream_options={"include_usage": True})
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert ANSWER in text
    assert chunks[-1].usage is not None and not chunks[-1].choices
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"
    assert Run.objects.filter(agent=agent, status="completed").count() == 2


def test_the_openai_client_sees_refusals_as_its_own_errors(
        runtime: str, deployed: tuple[Agent, Path, str], carol: User) -> None:
    agent = deployed[0]
    messages: Any = [{"role": "user", "content": "refunds"}]
    anonymous = openai.OpenAI(base_url=f"{runtime}/v1", api_key="kak_forged", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        anonymous.chat.completions.create(model=agent.name, messages=messages)
    key = key_of(carol, agent)
    client = openai.OpenAI(base_url=f"{runtime}/v1", api_key=key, max_retries=0)
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="gpt-4o", messages=messages)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(model=agent.name,
                                       messages=[{"role": "assistant", "content": "hi"}])
    do_revoke_key(carol, agent, AgentApiKey.objects.get(prefix=key[:8]))
    with pytest.raises(openai.AuthenticationError):
        client.models.list()
    assert not Run.objects.filter(agent=agent).exists()


async def _mcp(url: str, key: str) -> tuple[list[Any], Any]:
    async with httpx.AsyncClient(headers={"Authorization": f"Bearer {key}"},
                                 timeout=30) as http, \
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write, _), \
            ClientSession(read, write) as session:
        await session.initialize()
        tools = (await session.list_tools()).tools
        result = await session.call_tool(tools[0].name, {"input": "refunds",
                                                         "session_id": "mcp-1"})
        return tools, result


def test_the_mcp_client_calls_the_agent_as_its_one_tool(
        runtime: str, deployed: tuple[Agent, Path, str], carol: User,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="mcp.client.streamable_http")  # its version line
    agent = deployed[0]
    tools, result = asyncio.run(_mcp(runtime, key_of(carol, agent)))
    assert [t.name for t in tools] == [agent.name]
    assert tools[0].inputSchema["required"] == ["input"]
    assert not result.isError and ANSWER in result.content[0].text
    turn = Run.objects.get(pk=result.structuredContent["turn_id"])
    assert (turn.agent_id, turn.status, turn.session_id) == (agent.pk, "completed", "mcp-1")


def test_mcp_without_a_valid_key_is_401(
        runtime: str, deployed: tuple[Agent, Path, str]) -> None:
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"}}}
    headers = {"Accept": "application/json, text/event-stream"}
    for auth in ({}, {"Authorization": "Bearer kak_forged"}):
        answer = httpx.post(f"{runtime}/mcp", json=initialize, headers={**headers, **auth},
                            timeout=30)
        assert answer.status_code == 401 and answer.json()["error"]["code"] == "invalid_api_key"
