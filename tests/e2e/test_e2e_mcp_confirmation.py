"""A side-effect MCP tool acts only on the token of a preview of that very call: a first
call with `confirm: true` is refused, a preview's token confirms the same arguments once,
and a token of other arguments, used, unknown or expired is refused; nothing changes on
any refusal. The official MCP client, in-process, against the live gateway."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest
from django.db import connection
from mcp import ClientSession
from mcp.shared.memory import create_connected_server_and_client_session

from designs.models import Design
from kionga_client.confirmations import TOKEN_SECONDS, Confirmations
from kionga_client.gateway import Settings
from kionga_client.mcp_server import build_server
from tests.conftest import Api
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def call(session: ClientSession, tool: str, /, **arguments: Any) -> dict[str, Any]:
    answer = (await session.call_tool(tool, arguments)).structuredContent
    assert answer is not None
    return dict(answer)


def refusal(answer: dict[str, Any]) -> str:
    """Why a confirmed call was refused (and that it was)."""
    assert answer["ok"] is False and answer["error"]["code"] == "CONFIRMATION_REQUIRED", answer
    assert "without confirm" in answer["error"]["hint"]
    return str(answer["error"]["details"]["confirmation"])


async def designs() -> list[str]:
    """The designs' names, read on a worker thread (the ORM is sync-only) whose
    connection is closed after, so none outlives the test database."""

    def names() -> list[str]:
        try:
            return list(Design.objects.order_by("created_at").values_list("name", flat=True))
        finally:
            connection.close()

    return await anyio.to_thread.run_sync(names)


async def session_run(stack: Stack, token: str, clock: Clock) -> dict[str, Any]:
    server = build_server(Settings(url=stack.base_url, token=token), Confirmations(clock))
    seen: dict[str, Any] = {}
    async with create_connected_server_and_client_session(server) as session:
        tools = (await session.list_tools()).tools
        seen["schema"] = {t.name: set(t.inputSchema["properties"]) for t in tools}
        create = {"template": "assistant", "name": "Asked"}
        seen["first_call"] = refusal(await call(session, "designs_create", **create,
                                                confirm=True))
        preview = await call(session, "designs_create", **create)
        seen["preview"] = preview
        token = preview["data"]["confirmation_token"]
        seen["other_args"] = refusal(await call(session, "designs_create", **{
            **create, "name": "Not asked"}, confirm=True, confirmation_token=token))
        seen["after_mismatch"] = refusal(await call(session, "designs_create", **create,
                                                    confirm=True, confirmation_token=token))
        seen["made_by_refusals"] = await designs()
        token = (await call(session, "designs_create", **create))["data"]["confirmation_token"]
        seen["confirmed"] = await call(session, "designs_create", **create, confirm=True,
                                       confirmation_token=token)
        seen["twice"] = refusal(await call(session, "designs_create", **create, confirm=True,
                                           confirmation_token=token))
        seen["guessed"] = refusal(await call(session, "designs_create", **create,
                                             confirm=True, confirmation_token="guess"))
        token = (await call(session, "designs_create", **create))["data"]["confirmation_token"]
        seen["other_tool"] = refusal(await call(session, "evaluate", design_id=seen[
            "confirmed"]["data"]["design_id"], confirm=True, confirmation_token=token))
        token = (await call(session, "designs_create", **create))["data"]["confirmation_token"]
        clock.now += TOKEN_SECONDS
        seen["expired"] = refusal(await call(session, "designs_create", **create,
                                             confirm=True, confirmation_token=token))
        seen["designs"] = await designs()
    return seen


def test_only_a_previewed_call_acts_once(stack: Stack, api: Api, alice: Any,
                                         caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="mcp")  # not each request it serves
    seen = anyio.run(session_run, stack, api.token_for(alice), Clock())
    for name in ("designs_create", "designs_update", "run", "runs_cancel", "evaluate",
                 "publish"):
        assert {"confirm", "confirmation_token"} <= seen["schema"][name], name
    assert "confirmation_token" not in seen["schema"]["designs_list"]
    assert seen["first_call"] == "missing"
    preview = seen["preview"]
    assert preview["error"]["code"] == "CONFIRMATION_REQUIRED"
    assert preview["data"]["preview"]["will"] == "create a design from assistant"
    assert preview["data"]["expires_in_seconds"] == TOKEN_SECONDS
    assert seen["other_args"] == "mismatch"
    assert seen["after_mismatch"] == "unknown"  # a misused token is void
    assert seen["made_by_refusals"] == []
    assert seen["confirmed"]["ok"] is True and seen["confirmed"]["data"]["name"] == "Asked"
    assert seen["twice"] == "unknown"  # once only
    assert seen["guessed"] == "unknown"
    assert seen["other_tool"] == "mismatch"
    assert seen["expired"] == "expired"
    assert seen["designs"] == ["Asked"]  # the one confirmed call, and nothing else
