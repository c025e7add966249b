"""MCP tools in real runs: alice registers a real MCP server (FastMCP on loopback) over
the API, lists its tools, and a tool node naming `mcp:<server>/<tool>` calls it
through the stack's internal listener with the run's credential. The answer is the
node's output; a secret the server tries to hand back reaches no event or record;
without allow_side_effects the tool is not called; a server that hangs fails the
node within the call timeout, a garbage one at once, each with a clear code."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kionga.resource_models import McpServer
from runs.models import NodeRecord, RunEvent
from tests.conftest import Api
from tests.e2e.conftest import CALL_TIMEOUT_SECONDS, Http
from tests.e2e.helpers import schema_problems, wait_stored
from tests.mcp_peer import McpPeer, mcp_peer
from tests.stack import Stack
from tests.versions_helpers import linear

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.allow_output]  # the failing calls are logged as warnings

TOKEN = "mcp-e2e-canary-5be0c7d1"


@pytest.fixture
def peer() -> Iterator[McpPeer]:
    with mcp_peer() as running:
        yield running


def registered(http: Http, project_id: int, key: str, url: str) -> list[str]:
    """Register the server over the API and list its tools; their function names."""
    base = f"/api/v1/projects/{project_id}/resources/mcp_server"
    created = http.client.post(base, json={
        "id": key, "url": url, "secret_headers": {"Authorization": f"Bearer {TOKEN}"}})
    assert created.status_code == 201, created.text
    listed = http.client.post(f"{base}/{key}/tools")
    assert listed.status_code == 200, listed.text
    return [tool["function"] for tool in listed.json()["tools"]]


def tool_graph(function: str) -> dict[str, Any]:
    """input → tool → output, the tool's error port through a prompt to the output."""
    graph = linear({"id": "tool", "kind": "tool", "config": {"tool": function}})
    graph["nodes"].append({"id": "failed", "kind": "prompt", "name": "failed", "x": 0,
                           "y": 0, "config": {"template": "failed: {input}"}})
    graph["edges"] += [{"from": "tool", "to": "failed", "from_port": "error", "to_port": "in"},
                       {"from": "failed", "to": "output", "from_port": "out", "to_port": "in"}]
    return graph


def run(http: Http, project_id: int, function: str, text: str,
        **start: Any) -> dict[str, Any]:
    design_id = http.create_design(project_id, tool_graph(function), function)
    started = http.start(design_id, input=text, **start)
    assert started.status_code == 201, started.text
    done = wait_stored(http, design_id, started.json()["id"], timeout=45)
    assert schema_problems(done["events"]) == []
    return done


def appended(path: Path, size: int) -> str:
    with path.open("rb") as log:
        log.seek(size)
        return log.read().decode(errors="replace")


def failure(done: dict[str, Any]) -> dict[str, Any]:
    [failed] = [e for e in done["events"] if e["type"] == "node.failed"]
    return dict(failed["error"])


def test_a_tool_node_calls_an_mcp_tool(stack: Stack, api: Api, alice: Any, acme: Any,
                                       peer: McpPeer) -> None:
    http = Http(stack, api.token_for(alice))
    assert "mcp:peer/add" in registered(http, acme.pk, "peer", peer.url)
    done = run(http, acme.pk, "mcp:peer/add", '{"a": 20, "b": 22}', allow_side_effects=True)
    assert done["status"] == "completed", done
    assert json.loads(done["output"]) == {"sum": 42}
    [completed] = [e for e in done["events"]
                   if e["type"] == "node.completed" and e["node_id"] == "tool"]
    assert "42" in json.dumps(completed)


def test_a_secret_the_server_hands_back_reaches_no_event_or_record(
        stack: Stack, api: Api, alice: Any, acme: Any, peer: McpPeer) -> None:
    http = Http(stack, api.token_for(alice))
    registered(http, acme.pk, "peer", peer.url)
    done = run(http, acme.pk, "mcp:peer/whoami", "{}", allow_side_effects=True)
    assert done["status"] == "completed", done
    assert "[redacted]" in done["output"] and TOKEN not in json.dumps(done)
    stored = [json.dumps(e.data) for e in RunEvent.objects.filter(run_id=done["id"])]
    stored += [json.dumps(r.data) for r in NodeRecord.objects.filter(run_id=done["id"])]
    assert stored and not any(TOKEN in text for text in stored)


def test_without_side_effects_the_tool_is_not_called(
        stack: Stack, api: Api, alice: Any, acme: Any, peer: McpPeer) -> None:
    http = Http(stack, api.token_for(alice))
    registered(http, acme.pk, "peer", peer.url)
    calls = peer.hits["mcp"]
    done = run(http, acme.pk, "mcp:peer/add", '{"a": 1, "b": 2}')
    assert failure(done)["code"] == "side_effects_not_allowed"
    assert peer.hits["mcp"] == calls


def test_a_server_that_hangs_fails_the_node_within_the_call_timeout(
        stack: Stack, api: Api, alice: Any, acme: Any, peer: McpPeer) -> None:
    http = Http(stack, api.token_for(alice))
    registered(http, acme.pk, "peer", peer.url)
    done = run(http, acme.pk, "mcp:peer/hang", "{}", allow_side_effects=True)
    assert done["status"] == "completed"  # down the error branch
    assert failure(done) == {"code": "resource_unavailable", "message":
                             "functions/mcp%3Apeer%2Fhang/invoke: MCP tool 'mcp:peer/hang' "
                             f"did not answer within {CALL_TIMEOUT_SECONDS} s."}
    assert done["output"].startswith("failed: ")


def test_a_server_that_answers_garbage_fails_the_node_at_once(
        stack: Stack, api: Api, alice: Any, acme: Any, peer: McpPeer) -> None:
    http = Http(stack, api.token_for(alice))
    registered(http, acme.pk, "peer", peer.url)
    # The server starts answering garbage after its tools were listed.
    McpServer.objects.filter(project=acme, key="peer").update(url=peer.path("garbage"))
    logged = {path: path.stat().st_size for path in stack.log_dir.glob("*.log")}
    done = run(http, acme.pk, "mcp:peer/add", '{"a": 1, "b": 2}', allow_side_effects=True)
    assert failure(done) == {"code": "resource_unavailable", "message":
                             "functions/mcp%3Apeer%2Fadd/invoke: MCP tool 'mcp:peer/add' "
                             "answered something that is not MCP."}
    # The garbage quoted the credential: no log line of the stack's processes has it.
    assert peer.hits["garbage"] >= 1
    assert not [path for path, size in logged.items() if TOKEN in appended(path, size)]
