"""POST functions/mcp:<server>/<tool>/invoke: a run calls a listed tool of its project's
MCP server (a real FastMCP server on loopback) with the server's secret headers; the
answer comes back scrubbed of them; a tool is a side effect; a server that hangs,
answers garbage or cannot be reached is a clear error; nothing else is callable."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

import pytest
from django.contrib.auth.models import User
from django.test import override_settings

from kionga.mcp_tools import tool_entry
from kionga.models import Project
from kionga.resource_models import McpServer
from kionga.upstream import MAX_ANSWER_BYTES
from runs.internal import actions
from tests.internal_helpers import BASE, run_client, start_run
from tests.mcp_peer import TOOLS, McpPeer, mcp_peer

pytestmark = [pytest.mark.urls("kionga.internal_urls"), pytest.mark.django_db(transaction=True)]

TOKEN = "mcp-header-canary-93c1f0"


@pytest.fixture
def peer() -> Iterator[McpPeer]:
    with mcp_peer() as running:
        yield running


def server(project: Project, url: str, key: str = "peer") -> McpServer:
    """A registered server whose listing has the peer's tools (as a refresh keeps it)."""
    return McpServer.objects.create(
        project=project, key=key, url=url, secret_headers={"Authorization": f"Bearer {TOKEN}"},
        tools=[tool_entry(name, "", {}) for name in TOOLS])


def invoke(credential: str, name: str, value: Any) -> Any:
    return run_client(credential).post(BASE + f"functions/{quote(name, safe='')}/invoke",
                                       {"input": value}, format="json")


def run_naming(user: User, project: Project, *names: str, **kw: Any) -> str:
    return start_run(user, project, resources={"function": list(names)}, **kw)[1]


def test_a_run_calls_a_listed_tool(carol: User, acme: Project, peer: McpPeer) -> None:
    server(acme, peer.url)
    raw = run_naming(carol, acme, "mcp:peer/add", "mcp:peer/echo")
    added = invoke(raw, "mcp:peer/add", {"a": 2, "b": 40})
    assert added.status_code == 200, added.content
    assert added.json() == {"output": {"sum": 42}}
    # Text input is the reference's text → json: a JSON object, or {"input": text}.
    echoed = invoke(raw, "mcp:peer/echo", '{"text": "hello"}')
    assert echoed.json() == {"output": {"result": "hello"}}  # FastMCP wraps a str answer


def test_an_answer_never_carries_the_secret_header(
        carol: User, acme: Project, peer: McpPeer) -> None:
    server(acme, peer.url)
    raw = run_naming(carol, acme, "mcp:peer/whoami")
    answer = invoke(raw, "mcp:peer/whoami", {})
    assert answer.status_code == 200, answer.content
    assert TOKEN not in answer.content.decode()
    assert "[redacted]" in str(answer.json()["output"])


def test_a_tool_is_a_side_effect(carol: User, acme: Project, peer: McpPeer) -> None:
    server(acme, peer.url)
    raw = run_naming(carol, acme, "mcp:peer/add", allow_side_effects=False)
    answer = invoke(raw, "mcp:peer/add", {"a": 1, "b": 1})
    assert answer.status_code == 403
    assert answer.json()["error"]["code"] == "side_effects_not_allowed"
    assert peer.hits["mcp"] == 0


def test_only_listed_tools_the_graph_names_of_its_own_project(
        carol: User, acme: Project, mallory: User, evil: Project, peer: McpPeer) -> None:
    server(acme, peer.url)
    McpServer.objects.filter(key="peer").update(tools=[tool_entry("add", "", {})])
    raw = run_naming(carol, acme, "mcp:peer/add", "mcp:peer/echo")
    not_named = invoke(raw, "mcp:peer/fail", {})
    not_listed = invoke(raw, "mcp:peer/echo", {"text": "x"})
    for refused in (not_named, not_listed):
        assert refused.status_code == 404
        assert refused.json()["error"]["code"] == "resource_denied"
    # Another tenant's run naming it reaches nothing either.
    evil_raw = run_naming(mallory, evil, "mcp:peer/add")
    other = invoke(evil_raw, "mcp:peer/add", {"a": 1, "b": 1})
    assert other.status_code == 404 and other.json()["error"]["code"] == "resource_denied"
    assert peer.hits["mcp"] == 0


@pytest.mark.allow_output  # the failures are logged as warnings
def test_a_tool_error_fails_the_call(carol: User, acme: Project, peer: McpPeer) -> None:
    server(acme, peer.url)
    raw = run_naming(carol, acme, "mcp:peer/fail", "mcp:peer/add")
    failed = invoke(raw, "mcp:peer/fail", {})
    assert failed.status_code == 422
    assert failed.json()["error"]["code"] == "tool_failed"
    assert "the ticket system is closed" in failed.json()["error"]["message"]
    not_object = invoke(raw, "mcp:peer/add", [1, 2])
    assert not_object.status_code == 422
    assert not_object.json()["error"]["code"] == "tool_failed"


@pytest.mark.allow_output
def test_a_server_that_hangs_is_cut_off(carol: User, acme: Project, peer: McpPeer,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(actions, "CALL_TIMEOUT", 1.5)
    server(acme, peer.url)
    server(acme, peer.path("silent"), key="silent")
    raw = run_naming(carol, acme, "mcp:peer/hang", "mcp:silent/hang")
    hung = invoke(raw, "mcp:peer/hang", {})
    assert hung.status_code == 504, hung.content
    assert hung.json()["error"] == {
        "code": "resource_unavailable", "details": {},
        "message": "MCP tool 'mcp:peer/hang' did not answer within 1.5 s."}
    # Silent from the start: as any server that cannot be reached.
    silent = invoke(raw, "mcp:silent/hang", {})
    assert silent.status_code == 503
    assert silent.json()["error"]["message"] == "MCP tool 'mcp:silent/hang' cannot be reached."


@pytest.mark.allow_output
def test_a_server_that_answers_garbage_is_a_clear_error(
        carol: User, acme: Project, peer: McpPeer) -> None:
    server(acme, peer.path("garbage"), key="junk")
    raw = run_naming(carol, acme, "mcp:junk/add")
    answer = invoke(raw, "mcp:junk/add", {"a": 1, "b": 2})
    assert answer.status_code == 502
    assert answer.json()["error"]["code"] == "resource_unavailable"
    assert answer.json()["error"]["message"] == (
        "MCP tool 'mcp:junk/add' answered something that is not MCP.")


@pytest.mark.allow_output
def test_an_answer_past_the_bound_is_refused(carol: User, acme: Project, peer: McpPeer) -> None:
    server(acme, peer.url)
    raw = run_naming(carol, acme, "mcp:peer/big")
    assert invoke(raw, "mcp:peer/big", {"size": 1000}).json() == {
        "output": {"result": "x" * 1000}}
    answer = invoke(raw, "mcp:peer/big", {"size": MAX_ANSWER_BYTES})
    assert answer.status_code == 502
    assert answer.json()["error"]["message"] == (
        f"MCP tool 'mcp:peer/big' answered more than {MAX_ANSWER_BYTES} bytes.")


@pytest.mark.allow_output
def test_the_egress_policy_applies_at_each_call(
        carol: User, acme: Project, peer: McpPeer) -> None:
    server(acme, peer.url)
    raw = run_naming(carol, acme, "mcp:peer/add")
    with override_settings(KIONGA_EGRESS_ALLOW=[]):
        answer = invoke(raw, "mcp:peer/add", {"a": 1, "b": 2})
    assert answer.status_code == 503
    assert answer.json()["error"]["message"] == "MCP tool 'mcp:peer/add' cannot be reached."
    assert peer.hits["mcp"] == 0
