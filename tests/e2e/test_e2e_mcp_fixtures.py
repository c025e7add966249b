"""The MCP `fixtures_*` tools over stdio: list and suggest read; add (a past run saved as
a case), update and delete act only once confirmed, with the CLI's envelopes."""

from __future__ import annotations

import os
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from contracts.schemas import schema_errors
from designs.starter_templates import TEMPLATES
from evaluations.models import Fixtures
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import wait_stored
from tests.e2e.test_e2e_mcp import confirmation
from tests.stack import VENV_BIN, Stack

pytestmark = pytest.mark.django_db(transaction=True)


async def _session(stack: Stack, token: str, design_id: str, run_id: str) -> dict[str, Any]:
    params = StdioServerParameters(command=str(VENV_BIN / "kionga"), args=["mcp"], env={
        **os.environ, "KIONGA_URL": stack.base_url, "KIONGA_TOKEN": token})
    seen: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def call(name: str, **arguments: Any) -> dict[str, Any]:
            answer = (await session.call_tool(name, arguments)).structuredContent
            assert answer is not None and schema_errors("cli-envelope.v1", answer) == []
            return dict(answer)

        async def confirmed(name: str, **arguments: Any) -> dict[str, Any]:
            preview = await call(name, **arguments)
            assert preview["error"]["code"] == "CONFIRMATION_REQUIRED", preview
            seen.setdefault("previews", []).append(preview["data"]["preview"]["will"])
            seen.setdefault("rows_after_preview", []).append(await anyio.to_thread.run_sync(
                lambda: Fixtures.objects.filter(design_id=design_id).count()))
            return await call(name, **arguments, confirm=True,
                              confirmation_token=confirmation(preview))

        seen["empty"] = await call("fixtures_list", design_id=design_id)
        seen["added"] = await confirmed("fixtures_add", design_id=design_id,
                                        case={"name": "Saved run"}, from_run=run_id,
                                        expect_output=True)
        case_id = seen["added"]["data"]["case_id"]
        seen["updated"] = await confirmed("fixtures_update", design_id=design_id,
                                          case_id=case_id, case={"tags": ["kept"]})
        seen["suggested"] = await call("fixtures_suggest", design_id=design_id)
        seen["listed"] = await call("fixtures_list", design_id=design_id)
        seen["deleted"] = await confirmed("fixtures_delete", design_id=design_id,
                                          case_id=case_id)
        seen["after"] = await call("fixtures_list", design_id=design_id)
    return seen


def test_fixtures_tools(stack: Stack, api: Api, alice: Any, acme: Any) -> None:
    token = api.token_for(alice)
    http = Http(stack, token)
    graph = next(t for t in TEMPLATES if t["id"] == "assistant")["graph"]
    design_id = http.create_design(acme.pk, graph, "Cases")
    run_id = http.start(design_id, input="Hello cases").json()["id"]
    run = wait_stored(http, design_id, run_id)
    seen = anyio.run(_session, stack, token, design_id, run_id)
    assert seen["empty"]["data"]["cases"] == []
    assert seen["rows_after_preview"][0] == 0  # the preview added nothing
    added = seen["added"]["data"]["case"]
    assert added["input"] == "Hello cases"
    assert added["expected"]["judge"]["reference"] == run["output"]
    assert seen["updated"]["data"]["case"]["tags"] == ["kept"]
    assert seen["updated"]["data"]["case"]["input"] == "Hello cases"
    assert seen["suggested"]["data"]["suggestions"]
    assert [c["id"] for c in seen["listed"]["data"]["cases"]] == [added["id"]]
    assert seen["deleted"]["data"]["deleted"] == added["id"]
    assert seen["after"]["data"]["cases"] == [] and seen["after"]["data"]["revision"] == 3
    assert "delete test case" in seen["previews"][2]
