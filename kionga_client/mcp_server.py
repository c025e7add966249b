"""`kionga mcp`: the agent interface's operations as MCP tools over stdio.

Each tool maps to one function of `kionga_client.operations` and answers the same
`kionga/1` envelope as the CLI's `--json` (structured content, and as text). Tools are
annotated read-only or side effect; a side-effect tool first answers a preview of what it
will do (CONFIRMATION_REQUIRED, nothing changed) with a one-time `confirmation_token`, and
acts only when called again with the same arguments, `confirm: true` and that token
(`confirmations`). The server holds the caller's token and no other rights."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.stdio import stdio_server

from kionga_client import __version__, canary, envelope, plans, releases
from kionga_client import fixtures as cases
from kionga_client import operations as ops
from kionga_client.confirmations import (
    CONFIRM_FIELD,
    TOKEN_FIELD,
    TOKEN_SECONDS,
    Confirmations,
)
from kionga_client.errors import KiongaError
from kionga_client.gateway import Gateway, Settings
from kionga_client.guide import agent_guide

Args = dict[str, Any]
STR, INT, BOOL = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
CASE = {"type": "object", "description": "a test case: name, input, history, tags, "
        "expected {calls, judge {criteria, reference, min_score}}, approvals"}
CONFIRM = {"type": "boolean", "default": False,
           "description": "true once the person you act for agreed to the preview"}
CONFIRMATION_TOKEN = {"type": "string", "description": "the confirmation_token of this "
                      "call's preview (with confirm: true)"}


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    properties: dict[str, Any]
    required: tuple[str, ...]
    call: Callable[[Gateway, Args], ops.Result]
    side_effect: bool = False
    destructive: bool = False
    preview: Callable[[Gateway, Args], dict[str, Any]] | None = None

    def tool(self) -> types.Tool:
        properties = dict(self.properties)
        if self.side_effect:
            properties[CONFIRM_FIELD] = CONFIRM
            properties[TOKEN_FIELD] = CONFIRMATION_TOKEN
        return types.Tool(
            name=self.name, description=self.description,
            inputSchema={"type": "object", "properties": properties,
                         "required": list(self.required), "additionalProperties": False},
            annotations=types.ToolAnnotations(
                title=self.name.replace("_", " "), readOnlyHint=not self.side_effect,
                destructiveHint=self.destructive, idempotentHint=not self.side_effect,
                openWorldHint=self.destructive))


def _run(gw: Gateway, a: Args) -> ops.Result:
    plan = _run_preview(gw, a)
    started = ops.run_start(gw, a["design_id"], a.get("input", ""), plan=plan,
                            allow_side_effects=bool(a.get("allow_side_effects")),
                            idempotency_key=a.get("idempotency_key"),
                            rerun=ops.check_rerun(a.get("from_run"), a.get("from_node")))
    if a.get("detach"):
        return ops.Result(started, plans.side_effect_warnings(plan))
    for _ in ops.follow(gw, a["design_id"], started["run_id"]):
        pass
    final = ops.wait_stored(gw, a["design_id"], started["run_id"])
    ops.check_outcome(final)
    return ops.Result({k: v for k, v in final.items() if k != "events"},
                      plans.side_effect_warnings(plan))


def _run_preview(gw: Gateway, a: Args) -> dict[str, Any]:
    plan = ops.run_plan(gw, a["design_id"], a.get("version")).data
    plans.check_plan(plan)
    if plan["side_effects"] and a.get("version") is None and not a.get("allow_side_effects"):
        raise KiongaError("CONFIRMATION_REQUIRED", "This graph has side effects; call with "
                          "allow_side_effects: true for the preview of a run with them.",
                          data=plan)
    effects = "; ".join(e["what"] for e in plan["side_effects"]) or "none"
    what = (f"version {a['version']}" if a.get("version") else f"revision {plan['revision']}")
    rerun = ops.check_rerun(a.get("from_run"), a.get("from_node"))
    start = (f"with input {a.get('input', '')!r}" if rerun is None else
             f"from node {rerun['from_node']!r}, repeating run {rerun['from_run']}'s recorded "
             "outputs before it")
    return {**plan, "will": f"start a run of design {a['design_id']} {what} {start}; "
            f"side effects: {effects}"}


def _design_preview(gw: Gateway, a: Args) -> dict[str, Any]:
    if "design_id" in a:
        design = gw.request("GET", f"/agent-designs/{a['design_id']}",
                            not_found="DESIGN_NOT_FOUND")
        return {"design_id": design["id"], "name": design["name"],
                "revision": design["revision"]}
    return {}


def _previewed(what: str) -> Callable[[Gateway, Args], dict[str, Any]]:
    def preview(gw: Gateway, a: Args) -> dict[str, Any]:
        return {**_design_preview(gw, a), "will": what.format(**a)}
    return preview


def _cancel_preview(gw: Gateway, a: Args) -> dict[str, Any]:
    run = ops.run_get(gw, a["run_id"], a.get("design_id"))
    return {"run_id": run["run_id"], "design_id": run["design_id"], "status": run["status"],
            "will": f"cancel run {run['run_id']} ({run['status']})"}


def _rollback_preview(gw: Gateway, a: Args) -> dict[str, Any]:
    agent = gw.request("GET", f"/agents/{a['agent_id']}", not_found="AGENT_NOT_FOUND")
    return {"agent_id": agent["id"], "name": agent["name"], "version": agent["version"],
            "will": f"roll agent {agent['name']} back from version {agent['version']} to "
                    "the version it ran before"}


def _canary_preview(will: str) -> Callable[[Gateway, Args], dict[str, Any]]:
    def preview(gw: Gateway, a: Args) -> dict[str, Any]:
        agent = gw.request("GET", f"/agents/{a['agent_id']}", not_found="AGENT_NOT_FOUND")
        return {"agent_id": agent["id"], "name": agent["name"], "version": agent["version"],
                "canary": agent.get("canary"), "will": will.format(name=agent["name"], **a)}
    return preview


def _fixtures_add(gw: Gateway, a: Args) -> ops.Result:
    extra = {"from_run": a.get("from_run"), "expect_output": a.get("expect_output") or None}
    return cases.fixtures_add(gw, a["design_id"], {
        **a["case"], **{k: v for k, v in extra.items() if v is not None}})


TOOLS: list[ToolSpec] = [
    ToolSpec("capabilities", "Version, your projects, component registry, conversions, "
             "condition operators and the gateway's features.", {}, (),
             lambda gw, a: ops.capabilities(gw)),
    ToolSpec("designs_list", "The designs of your projects.", {"project_id": INT}, (),
             lambda gw, a: ops.designs_list(gw, a.get("project_id"))),
    ToolSpec("designs_show", "One design: graph, steps, side effects, last run.",
             {"design_id": STR}, ("design_id",), lambda gw, a: ops.design_show(gw, a["design_id"])),
    ToolSpec("templates_list", "Starter templates (each runs with the mock model).", {}, (),
             lambda gw, a: ops.templates_list(gw)),
    ToolSpec("validate", "Validate a graph (object) or a saved design (design_id).",
             {"design_id": STR, "graph": {"type": "object"}, "project_id": INT}, (),
             lambda gw, a: _validate(gw, a)),
    ToolSpec("run_plan", "What a run would do: validity, steps and side effects (a dry run).",
             {"design_id": STR, "version": INT}, ("design_id",),
             lambda gw, a: _plan(gw, a)),
    ToolSpec("runs_show", "A run with its stored events.",
             {"run_id": STR, "design_id": STR}, ("run_id",),
             lambda gw, a: ops.run_show(gw, a["run_id"], a.get("design_id"))),
    ToolSpec("runs_events", "A run's stored events after seq `after`.",
             {"run_id": STR, "design_id": STR, "after": INT}, ("run_id",),
             lambda gw, a: ops.run_events(gw, a["run_id"], a.get("design_id"),
                                          a.get("after", -1))),
    ToolSpec("runs_list", "A design's runs, newest first (optionally of one status).",
             {"design_id": STR, "status": {"enum": list(ops.RUN_STATUSES)},
              "limit": {"type": "integer", "minimum": 1}}, ("design_id",),
             lambda gw, a: ops.runs_list(gw, a["design_id"], status=a.get("status"),
                                         limit=a.get("limit"))),
    ToolSpec("versions_list", "A design's published versions.", {"design_id": STR},
             ("design_id",), lambda gw, a: releases.versions_list(gw, a["design_id"])),
    ToolSpec("approvals_list", "Approval requests of your projects (read only: people "
             "decide them).", {"status": {"enum": ["pending", "approved", "rejected",
                                                   "expired", "cancelled"]},
                               "project_id": INT, "run_id": STR, "limit": INT}, (),
             lambda gw, a: ops.approvals_list(gw, status=a.get("status", "pending"),
                                              project_id=a.get("project_id"),
                                              run_id=a.get("run_id"), limit=a.get("limit"))),
    ToolSpec("agents_list", "Deployed agents of your projects.", {"project_id": INT}, (),
             lambda gw, a: ops.agents_list(gw, a.get("project_id"))),
    ToolSpec("fixtures_list", "A design's test cases (id, name, input, history, tags, "
             "expected calls and judge, approvals) and their revision.",
             {"design_id": STR}, ("design_id",),
             lambda gw, a: cases.fixtures_list(gw, a["design_id"])),
    ToolSpec("fixtures_suggest", "Test cases proposed from the design's graph paths (not "
             "saved: add the ones you want with fixtures_add).", {"design_id": STR},
             ("design_id",), lambda gw, a: cases.fixtures_suggest(gw, a["design_id"])),
    ToolSpec("designs_create", "Create a design from a template id or a graph.",
             {"template": STR, "graph": {"type": "object"}, "name": STR, "project_id": INT,
              "require_evaluation": BOOL},
             (), lambda gw, a: ops.design_create(
                 gw, name=a.get("name"), graph=a.get("graph"), template=a.get("template"),
                 project_id=a.get("project_id"), require_evaluation=a.get("require_evaluation")),
             side_effect=True, preview=lambda gw, a: {
                 "will": f"create a design from {a.get('template') or 'the given graph'}"}),
    ToolSpec("designs_update", "Save a new revision of a design (send the revision you read).",
             {"design_id": STR, "graph": {"type": "object"}, "revision": INT, "name": STR,
              "require_evaluation": BOOL},
             ("design_id", "graph", "revision"),
             lambda gw, a: ops.design_update(gw, a["design_id"], graph=a["graph"],
                                             revision=a["revision"], name=a.get("name"),
                                             require_evaluation=a.get("require_evaluation")),
             side_effect=True, preview=_previewed("save revision {revision} + 1")),
    ToolSpec("run", "Run a design (or version N) and wait for its end, or detach. With "
             "from_run and from_node: again from that node (or resume a failed run from its "
             "failed node); the nodes before it repeat from_run's recorded outputs.",
             {"design_id": STR, "input": STR, "version": INT, "allow_side_effects": BOOL,
              "detach": BOOL, "idempotency_key": STR, "from_run": STR, "from_node": STR},
             ("design_id",), _run,
             side_effect=True, destructive=True, preview=_run_preview),
    ToolSpec("runs_cancel", "Cancel a run.", {"run_id": STR, "design_id": STR}, ("run_id",),
             lambda gw, a: ops.run_cancel(gw, a["run_id"], a.get("design_id")),
             side_effect=True, destructive=True, preview=_cancel_preview),
    ToolSpec("evaluate", "Evaluate a design against every case of its fixtures (an "
             "evaluation that passes opens publish's quality gate: publish with its "
             "evaluation_id).",
             {"design_id": STR, "revision": INT, "gate": {**BOOL, "default": True},
              "detach": BOOL},
             ("design_id",), lambda gw, a: releases.evaluate(
                 gw, a["design_id"], revision=a.get("revision"), gate=a.get("gate", True),
                 detach=bool(a.get("detach"))),
             side_effect=True, preview=_previewed("evaluate design {design_id}")),
    ToolSpec("fixtures_add", "Add a test case to a design: case is the gateway's case "
             "object (name, input, history, tags, expected, approvals). With from_run "
             "(a run of the design) the input is the run's; with expect_output too, its "
             "output becomes the expected answer.",
             {"design_id": STR, "case": CASE, "from_run": STR, "expect_output": BOOL},
             ("design_id", "case"), _fixtures_add,
             side_effect=True, preview=_previewed("add a test case to design {design_id}")),
    ToolSpec("fixtures_update", "Change a test case: the keys of case replace its own.",
             {"design_id": STR, "case_id": STR, "case": CASE},
             ("design_id", "case_id", "case"),
             lambda gw, a: cases.fixtures_update(gw, a["design_id"], a["case_id"], a["case"]),
             side_effect=True, preview=_previewed("change test case {case_id}")),
    ToolSpec("fixtures_delete", "Delete a test case of a design.",
             {"design_id": STR, "case_id": STR}, ("design_id", "case_id"),
             lambda gw, a: cases.fixtures_delete(gw, a["design_id"], a["case_id"]),
             side_effect=True, destructive=True,
             preview=_previewed("delete test case {case_id}")),
    ToolSpec("publish", "Publish a revision as an immutable version.",
             {"design_id": STR, "revision": INT, "notes": STR, "evaluation_id": STR},
             ("design_id",), lambda gw, a: releases.publish(
                 gw, a["design_id"], revision=a.get("revision"), notes=a.get("notes", ""),
                 evaluation_id=a.get("evaluation_id")),
             side_effect=True, preview=_previewed("publish design {design_id}")),
    ToolSpec("agents_rollback", "Roll a deployed agent back to the version it ran before "
             "(the gateway verifies that version's hash).", {"agent_id": STR}, ("agent_id",),
             lambda gw, a: ops.agent_rollback(gw, a["agent_id"]),
             side_effect=True, destructive=True, preview=_rollback_preview),
    ToolSpec("agents_canary_status", "A deployed agent's canary and both versions' turns, "
             "errors, latency p50/p95, tokens and cost side by side.",
             {"agent_id": STR, "hours": INT}, ("agent_id",),
             lambda gw, a: canary.canary_status(gw, a["agent_id"], a.get("hours", 24))),
    ToolSpec("agents_canary_start", "Start (or change) a canary: the version (its number or "
             "ID) serves `percent` (1-99) of the agent's turns, sticky per session.",
             {"agent_id": STR, "version": STR, "percent": INT},
             ("agent_id", "version", "percent"),
             lambda gw, a: canary.canary_start(gw, a["agent_id"], str(a["version"]),
                                               a["percent"]),
             side_effect=True, preview=_canary_preview(
                 "send {percent} % of agent {name}'s turns to version {version}")),
    ToolSpec("agents_canary_promote", "Promote an agent's canary: it becomes the agent's "
             "version and the canary ends.", {"agent_id": STR}, ("agent_id",),
             lambda gw, a: canary.canary_promote(gw, a["agent_id"]),
             side_effect=True, destructive=True,
             preview=_canary_preview("make agent {name}'s canary its version")),
    ToolSpec("agents_canary_rollback", "End an agent's canary; it keeps its version.",
             {"agent_id": STR}, ("agent_id",),
             lambda gw, a: canary.canary_rollback(gw, a["agent_id"]),
             side_effect=True, destructive=True,
             preview=_canary_preview("end agent {name}'s canary")),
]
BY_NAME = {spec.name: spec for spec in TOOLS}
RESOURCES = [
    types.Resource(uri="kionga://components", name="components", mimeType="application/json",  # type: ignore[arg-type]
                   description="The component registry of the gateway."),
    types.Resource(uri="kionga://agent-guide", name="agent-guide", mimeType="text/markdown",  # type: ignore[arg-type]
                   description="How to use Kionga as an agent: calls, errors, retries."),
]


def _validate(gw: Gateway, a: Args) -> ops.Result:
    if a.get("design_id"):
        return ops.validate(gw, a["design_id"])
    import os
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(a.get("graph") or {}, handle)
    try:
        return ops.validate(gw, handle.name, a.get("project_id"))
    finally:
        os.unlink(handle.name)


def _plan(gw: Gateway, a: Args) -> ops.Result:
    plan = ops.run_plan(gw, a["design_id"], a.get("version")).data
    plans.check_plan(plan)
    return ops.Result(plan, plans.side_effect_warnings(plan))


def call_tool(settings: Settings, confirmations: Confirmations, name: str,
              arguments: Args) -> dict[str, Any]:
    """One tool call, as the envelope the CLI's --json would print."""
    spec = BY_NAME.get(name)
    if spec is None:
        return envelope.failure(name, KiongaError("USAGE", f"No tool {name!r}."))
    gw = Gateway(settings)
    try:
        if spec.side_effect:
            if arguments.get(CONFIRM_FIELD) is not True:
                raise previewed(gw, spec, confirmations, arguments)
            confirmations.redeem(name, arguments)
        args = {k: v for k, v in arguments.items() if k not in (CONFIRM_FIELD, TOKEN_FIELD)}
        return envelope.success(name, spec.call(gw, args))
    except KiongaError as error:
        return envelope.failure(name, error)
    finally:
        gw.close()


def previewed(gw: Gateway, spec: ToolSpec, confirmations: Confirmations,
              arguments: Args) -> KiongaError:
    """What a side-effect tool would do, and the token that lets this exact call act."""
    preview = spec.preview(gw, arguments) if spec.preview else {}
    token = confirmations.issue(spec.name, arguments)
    return KiongaError(
        "CONFIRMATION_REQUIRED", f"Not done: {spec.name} changes things. Show the preview to "
        "the person you act for; once they agree, call again with the same arguments, "
        f"confirm: true and {TOKEN_FIELD}.",
        data={"preview": preview, TOKEN_FIELD: token, "expires_in_seconds": TOKEN_SECONDS})


def build_server(settings: Settings,
                 confirmations: Confirmations | None = None) -> Server[Any, Any]:
    """The MCP server of one client (its own previews' tokens)."""
    server: Server[Any, Any] = Server("kionga", version=__version__,
                                      instructions=agent_guide())
    confirmations = confirmations or Confirmations()

    @server.list_tools()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_tools() -> list[types.Tool]:
        return [spec.tool() for spec in TOOLS]

    @server.call_tool(validate_input=True)  # type: ignore[untyped-decorator]
    async def tool(name: str, arguments: Args) -> types.CallToolResult:
        answer = await anyio.to_thread.run_sync(call_tool, settings, confirmations, name,
                                                 arguments or {})
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=json.dumps(answer))],
            structuredContent=answer, isError=not answer["ok"])

    @server.list_resources()  # type: ignore[no-untyped-call, untyped-decorator]
    async def list_resources() -> list[types.Resource]:
        return RESOURCES

    @server.read_resource()  # type: ignore[no-untyped-call, untyped-decorator]
    async def read_resource(uri: Any) -> list[ReadResourceContents]:
        if str(uri) == "kionga://agent-guide":
            return [ReadResourceContents(content=agent_guide(), mime_type="text/markdown")]
        if str(uri) == "kionga://components":
            def fetch() -> str:
                gw = Gateway(settings)
                try:
                    return json.dumps(ops.registry(gw))
                finally:
                    gw.close()
            text = await anyio.to_thread.run_sync(fetch)
            return [ReadResourceContents(content=text, mime_type="application/json")]
        raise ValueError(f"No resource {uri}")

    return server


def serve(settings: Settings) -> None:
    async def main() -> None:
        server = build_server(settings)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
