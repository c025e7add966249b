"""`kionga mcp` with the official MCP client over stdio: tools carry their annotations, a
template runs end to end, and a side-effect tool acts only once the client confirms with
its preview's token (the refusals: test_e2e_mcp_confirmation.py)."""

from __future__ import annotations

import json
import os
import uuid
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from contracts.schemas import schema_errors
from designs.models import Design
from runs.models import Run
from tests.conftest import Api
from tests.stack import VENV_BIN, Stack

pytestmark = pytest.mark.django_db(transaction=True)
READ_ONLY = {"capabilities", "designs_list", "designs_show", "templates_list", "validate",
             "run_plan", "runs_list", "runs_show", "runs_events", "versions_list",
             "approvals_list", "agents_list", "fixtures_list", "fixtures_suggest",
             "agents_canary_status"}
SIDE_EFFECTS = {"designs_create", "designs_update", "run", "runs_cancel", "evaluate",
                "publish", "agents_rollback", "fixtures_add", "fixtures_update",
                "fixtures_delete", "agents_canary_start", "agents_canary_promote",
                "agents_canary_rollback"}


def confirmation(preview: dict[str, Any]) -> str:
    """The token a side-effect tool's preview gives, to confirm that call."""
    return str(preview["data"]["confirmation_token"])


async def _session_run(stack: Stack, token: str) -> dict[str, Any]:
    params = StdioServerParameters(command=str(VENV_BIN / "kionga"), args=["mcp"], env={
        **os.environ, "KIONGA_URL": stack.base_url, "KIONGA_TOKEN": token})
    seen: dict[str, Any] = {}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def call(name: str, **arguments: Any) -> dict[str, Any]:
            result = await session.call_tool(name, arguments)
            answer = result.structuredContent
            assert answer is not None and schema_errors("cli-envelope.v1", answer) == []
            assert json.loads(result.content[0].text) == answer  # type: ignore[union-attr]
            assert result.isError is (not answer["ok"])
            return dict(answer)

        seen["tools"] = (await session.list_tools()).tools
        seen["resources"] = [str(r.uri) for r in (await session.list_resources()).resources]
        guide = await session.read_resource("kionga://agent-guide")  # type: ignore[arg-type]
        seen["guide"] = guide.contents[0].text  # type: ignore[union-attr]
        components = await session.read_resource("kionga://components")  # type: ignore[arg-type]
        seen["components"] = json.loads(components.contents[0].text)  # type: ignore[union-attr]
        templates = (await call("templates_list"))["data"]["templates"]
        seen["refused_create"] = await call("designs_create", template=templates[0]["id"])
        seen["designs_after_refusal"] = await anyio.to_thread.run_sync(Design.objects.count)
        design = (await call("designs_create", template=templates[0]["id"], confirm=True,
                             confirmation_token=confirmation(seen["refused_create"])))
        design_id = design["data"]["design_id"]
        seen["refused_run"] = await call("run", design_id=design_id, input="hi")
        seen["runs_after_refusal"] = await anyio.to_thread.run_sync(Run.objects.count)
        seen["plan"] = await call("run_plan", design_id=design_id)
        seen["run"] = await call("run", design_id=design_id, input="hi", confirm=True,
                                 confirmation_token=confirmation(seen["refused_run"]))
        seen["shown"] = await call("runs_show", run_id=seen["run"]["data"]["run_id"])
        # Again from the model node: the nodes before it repeat the run's outputs.
        again = {"design_id": design_id, "from_run": seen["run"]["data"]["run_id"],
                 "from_node": "model"}
        seen["refused_rerun"] = await call("run", **again)
        seen["rerun"] = await call("run", **again, confirm=True,
                                   confirmation_token=confirmation(seen["refused_rerun"]))
        seen["missing"] = await call("designs_show", design_id=str(uuid.uuid4()))
    return seen


def test_mcp_server_over_stdio(stack: Stack, api: Api, alice: Any) -> None:
    seen = anyio.run(_session_run, stack, api.token_for(alice))
    tools = {t.name: t for t in seen["tools"]}
    assert set(tools) == READ_ONLY | SIDE_EFFECTS
    for name, tool in tools.items():
        assert tool.inputSchema["type"] == "object"
        assert tool.annotations is not None
        assert tool.annotations.readOnlyHint is (name in READ_ONLY), name
        assert ("confirm" in tool.inputSchema["properties"]) is (name in SIDE_EFFECTS)
    assert tools["run"].annotations.destructiveHint is True  # type: ignore[union-attr]
    assert tools["designs_list"].annotations.destructiveHint is False  # type: ignore[union-attr]
    assert seen["resources"] == ["kionga://components", "kionga://agent-guide"]
    assert "confirm: true" in seen["guide"] and len(seen["components"]["components"]) == 17
    # A side-effect tool without confirmation: a preview, nothing done.
    refused = seen["refused_run"]
    assert refused["error"]["code"] == "CONFIRMATION_REQUIRED" and refused["exit_code"] == 2
    assert "side effects: none" in refused["data"]["preview"]["will"]
    assert [s["node_id"] for s in refused["data"]["preview"]["steps"]] == [
        s["node_id"] for s in seen["plan"]["data"]["steps"]]
    assert seen["runs_after_refusal"] == 0
    assert seen["refused_create"]["error"]["code"] == "CONFIRMATION_REQUIRED"
    assert seen["designs_after_refusal"] == 0
    # The template ran end to end with the mock model.
    run = seen["run"]["data"]
    assert run["status"] == "completed" and run["output"].startswith("mock: ")
    assert seen["shown"]["data"]["events"][-1]["type"] == "run.completed"
    assert seen["missing"]["error"]["code"] == "DESIGN_NOT_FOUND"
    assert "from node 'model'" in seen["refused_rerun"]["data"]["preview"]["will"]
    rerun = seen["rerun"]["data"]
    assert rerun["status"] == "completed" and rerun["output"] == run["output"]
    assert rerun["from_run"] == run["run_id"] and rerun["from_node"] == "model"
