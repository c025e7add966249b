"""Every operation of the agent interface, as plain functions over a `Gateway`.

Each returns a `Result` (the envelope's `data` and `warnings`) or raises `KiongaError`
(with whatever `data` is known, e.g. the `run_id` of a failed run). The CLI and the MCP
server call these and nothing else."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
from httpx_sse import SSEError, connect_sse

from kionga_client import ENVELOPE_SCHEMA, __version__, plans
from kionga_client.errors import KiongaError
from kionga_client.gateway import Gateway, error_of

FINAL_STATUSES = ("completed", "failed", "cancelled")
# The gateway's run status words (runs/models.py Run.Status), for `runs list --status`.
RUN_STATUSES = ("queued", "running", "waiting", *FINAL_STATUSES)
TERMINAL_EVENTS = ("run.completed", "run.failed", "run.cancelled")
# Run failure code (runner.failures, and the gateway's own) → ours.
FAILURE_CODES: dict[str, str] = {
    "node_error": "NODE_FAILED", "resource_denied": "NODE_FAILED",
    "resource_unavailable": "NODE_FAILED", "side_effects_not_allowed": "NODE_FAILED",
    "timeout": "RUN_TIMEOUT", "budget_exceeded": "BUDGET_EXCEEDED",
    "cancelled": "RUN_CANCELLED",
}
FEATURE_PATHS = {
    "runs": "/api/v1/agent-designs/{design_id}/runs",
    "events_sse": "/api/v1/agent-designs/{design_id}/runs/{run_id}/events",
    "publish": "/api/v1/agent-designs/{design_id}/publish",
    "versions": "/api/v1/agent-designs/{design_id}/versions",
    "fixtures": "/api/v1/agent-designs/{design_id}/fixtures",
    "evaluations": "/api/v1/agent-designs/{design_id}/evaluations",
    "approvals": "/api/v1/agent-approvals",
}


@dataclass
class Result:
    data: Any
    warnings: list[dict[str, str]] = field(default_factory=list)


# --- discovery -------------------------------------------------------------------------

def capabilities(gw: Gateway) -> Result:
    registry = gw.request("GET", "/agent-designs/components")
    features = {name: False for name in FEATURE_PATHS}
    try:
        schema = gw.http.get("/api/schema/", params={"format": "json"},
                             headers={"Accept": "application/vnd.oai.openapi+json"})
        paths = schema.json().get("paths", {}) if schema.is_success else {}
        features = {name: _route_known(paths, route) for name, route in FEATURE_PATHS.items()}
    except (httpx.HTTPError, ValueError):
        pass
    return Result({
        "version": __version__, "envelope": ENVELOPE_SCHEMA, "gateway": gw.settings.url,
        "registry_version": registry.get("registry_version"),
        "components": registry.get("components", []), "types": registry.get("types", []),
        "conversions": registry.get("conversions", []),
        "condition_operators": registry.get("condition_operators", []),
        "limits": registry.get("limits", {}), "features": features,
    })


def _route_known(paths: dict[str, Any], route: str) -> bool:
    # drf-spectacular names path parameters after the view's arguments.
    shape = [p if not p.startswith("{") else "{}" for p in route.split("/")]
    return any([p if not p.startswith("{") else "{}" for p in known.split("/")] == shape
               for known in paths)


def registry(gw: Gateway) -> dict[str, Any]:
    return dict(gw.request("GET", "/agent-designs/components"))


def templates_list(gw: Gateway) -> Result:
    return Result({"templates": gw.request("GET", "/agent-designs/templates")["templates"]})


# --- designs ---------------------------------------------------------------------------

def designs_list(gw: Gateway, project_id: int | None = None) -> Result:
    found = gw.request("GET", "/agent-designs", params={"project_id": project_id})
    return Result({"designs": found["designs"]})


def design_get(gw: Gateway, design_id: str) -> dict[str, Any]:
    """The design as the gateway has it: graph, validation, revision."""
    return dict(gw.request("GET", f"/agent-designs/{design_id}", not_found="DESIGN_NOT_FOUND"))


def design_show(gw: Gateway, design_id: str) -> Result:
    design = design_get(gw, design_id)
    plan = plans.graph_plan(design["graph"], registry(gw))
    runs = gw.request("GET", f"/agent-designs/{design_id}/runs",
                      not_found="DESIGN_NOT_FOUND")["runs"]
    last = _run_data(runs[0]) if runs else None
    return Result({**design, "design_id": design["id"], "steps": plan["steps"],
                   "side_effects": plan["side_effects"], "last_run": last})


def design_create(gw: Gateway, *, name: str | None = None, graph: dict[str, Any] | None = None,
                  template: str | None = None, project_id: int | None = None,
                  description: str = "", require_evaluation: bool | None = None) -> Result:
    if template is not None:
        found = [t for t in templates_list(gw).data["templates"] if t["id"] == template]
        if not found:
            raise KiongaError("TEMPLATE_NOT_FOUND", f"No template {template!r}.")
        graph = found[0]["graph"]
        name = name or found[0]["name"]
        description = description or found[0].get("description", "")
    if graph is None:
        raise KiongaError("USAGE", "Give a graph file or a template.")
    body: dict[str, Any] = {"project_id": project_id or default_project(gw),
                            "name": name or "Untitled", "description": description,
                            "graph": graph}
    if require_evaluation is not None:
        body["require_evaluation"] = require_evaluation
    design = gw.request("POST", "/agent-designs", json=body)
    return _saved(design, require_evaluation)


def design_update(gw: Gateway, design_id: str, *, graph: dict[str, Any] | None, revision: int,
                  name: str | None = None, require_evaluation: bool | None = None) -> Result:
    """Save a new revision; without `graph`, of the saved graph as it is (to change only
    the name or `require_evaluation`)."""
    if graph is None:
        graph = design_get(gw, design_id)["graph"]
    body: dict[str, Any] = {"revision": revision, "graph": graph}
    if name is not None:
        body["name"] = name
    if require_evaluation is not None:
        body["require_evaluation"] = require_evaluation
    design = gw.request("PUT", f"/agent-designs/{design_id}", json=body,
                        not_found="DESIGN_NOT_FOUND")
    return _saved(design, require_evaluation)


def _saved(design: dict[str, Any], require_evaluation: bool | None) -> Result:
    """A created or updated design; a warning when the gateway did not take the
    `require_evaluation` asked for (one older than this client ignores the field)."""
    warnings = []
    if require_evaluation is not None and design.get("require_evaluation") != require_evaluation:
        warnings.append({"code": "require_evaluation_ignored", "message": (
            f"The gateway kept require_evaluation {design.get('require_evaluation')} "
            f"(asked: {require_evaluation}); it may be older than this client.")})
    return Result({**design, "design_id": design["id"]}, warnings)


def default_project(gw: Gateway) -> int:
    """The caller's project when they have exactly one."""
    projects = gw.request("GET", "/me")["projects"]
    if len(projects) != 1:
        raise KiongaError("USAGE", f"You are in {len(projects)} projects; pass --project ID.",
                          data={"projects": projects})
    return int(projects[0]["id"])


def load_graph(path: str) -> dict[str, Any]:
    try:
        text = Path(path).read_text(encoding="utf-8") if path != "-" else _stdin()
        graph = json.loads(text)
    except OSError as exc:
        raise KiongaError("USAGE", f"Cannot read {path}: {exc.strerror}.") from exc
    except ValueError as exc:
        raise KiongaError("GRAPH_INVALID", f"{path} is not JSON: {exc}.") from exc
    if not isinstance(graph, dict):
        raise KiongaError("GRAPH_INVALID", f"{path} does not hold a JSON object.")
    return graph


def _stdin() -> str:
    import sys
    return sys.stdin.read()


# --- validation and plans ----------------------------------------------------------------

def validate(gw: Gateway, target: str, project_id: int | None = None) -> Result:
    """Validate a graph file (or `-` for stdin) or a saved design (its ID)."""
    if _is_design_id(target) and not Path(target).exists():
        report = gw.request("POST", f"/agent-designs/{target}/validate", json={},
                            not_found="DESIGN_NOT_FOUND")
        report["design_id"] = target
    else:
        body = {**load_graph(target)}
        if project_id is not None:
            body["project_id"] = project_id
        report = gw.request("POST", "/agent-designs/validate", json=body)
    data = {"runnable": report["runnable"], "issues": report["issues"],
            "content_sha256": report.get("content_sha256"),
            **({"design_id": report["design_id"]} if "design_id" in report else {})}
    plans.check_runnable(report["runnable"], report["issues"], data)
    return Result(data, [{"code": i["code"], "message": i["message"]}
                         for i in report["issues"] if i.get("severity") != "error"])


def _is_design_id(text: str) -> bool:
    import uuid
    try:
        uuid.UUID(text)
        return True
    except ValueError:
        return False


def run_plan(gw: Gateway, design_id: str, version: int | None = None) -> Result:
    """What `run` would do: the revision or version, validity, steps and side effects."""
    if version is None:
        design = design_get(gw, design_id)
        graph, revision, version_id = design["graph"], design["revision"], None
        validation = design["validation"]
    else:
        found = find_version(gw, design_id, version)
        artifact = gw.request("GET", f"/agent-versions/{found['id']}",
                              not_found="VERSION_NOT_FOUND")
        graph, revision, version_id = artifact["graph"], found["source_revision"], found["id"]
        validation = {"runnable": True, "issues": []}
    plan = plans.graph_plan(graph, registry(gw))
    return Result({"design_id": design_id, "revision": revision, "version_id": version_id,
                   "version": version, "runnable": validation["runnable"],
                   "issues": validation["issues"], **plan})


def find_version(gw: Gateway, design_id: str, number: int) -> dict[str, Any]:
    versions = gw.request("GET", f"/agent-designs/{design_id}/versions",
                          not_found="DESIGN_NOT_FOUND")["versions"]
    for found in versions:
        if found["number"] == number:
            return dict(found)
    raise KiongaError("VERSION_NOT_FOUND", f"Design {design_id} has no version {number}.")


# --- runs ------------------------------------------------------------------------------

def run_start(gw: Gateway, design_id: str, text: str, *, plan: dict[str, Any],
              allow_side_effects: bool = False, session_id: str | None = None,
              idempotency_key: str | None = None,
              rerun: dict[str, str] | None = None) -> dict[str, Any]:
    """Start a run of the planned revision (or version); the run as the gateway answers.
    `rerun` ({from_run, from_node}): repeat that run's recorded outputs of the nodes
    before from_node (see check_rerun)."""
    headers = {"Idempotency-Key": idempotency_key} if idempotency_key else None
    if plan["version_id"] is not None:
        run = gw.request("POST", f"/agent-versions/{plan['version_id']}/runs",
                         json=_start_body(text, session_id, rerun=rerun),
                         not_found="VERSION_NOT_FOUND", headers=headers)
    else:
        run = gw.request("POST", f"/agent-designs/{design_id}/runs",
                         json=_start_body(text, session_id, plan, allow_side_effects, rerun),
                         not_found="DESIGN_NOT_FOUND", headers=headers)
    return _run_data(run)


def check_rerun(from_run: str | None, from_node: str | None) -> dict[str, str] | None:
    """A re-run's part of a start's body, or None: from_run and from_node go together.
    The gateway runs from_node and every node after it; the others repeat their outputs
    recorded in from_run (no call, no tokens); it takes from_run's input."""
    if from_run is None and from_node is None:
        return None
    if from_run is None or from_node is None:
        raise KiongaError("USAGE", "A re-run needs both --from-run and --from-node.")
    return {"from_run": from_run, "from_node": from_node}


def _start_body(text: str, session_id: str | None, plan: dict[str, Any] | None = None,
                allow_side_effects: bool = False,
                rerun: dict[str, str] | None = None) -> dict[str, Any]:
    """A start's body; with the `plan` of a design run, its revision and side effects."""
    body: dict[str, Any] = {"input": text}
    if session_id:
        body["session_id"] = session_id
    if plan is not None:
        body.update(revision=plan["revision"], allow_side_effects=allow_side_effects)
    if rerun is not None:
        body.update(rerun)
    return body


def run_start_streaming(gw: Gateway, design_id: str, text: str, *, plan: dict[str, Any],
                        allow_side_effects: bool = False, session_id: str | None = None,
                        idempotency_key: str | None = None,
                        on_reconnect: Callable[[int | None], None] | None = None,
                        rerun: dict[str, str] | None = None,
                        ) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
    """Start a run of the planned revision and follow it in the same request (`POST
    …/runs` with `Accept: text/event-stream`): the run as the gateway answers it, and its
    events to the end (a dropped stream resumes on the events route, as `follow`, with
    on_reconnect told so before each resumption)."""
    headers = {"Accept": "text/event-stream"}
    if idempotency_key:
        headers["Idempotency-Key"] = idempotency_key
    gw.check_token()
    # The stream outlives this call: the events' iterator closes it (_rest_of).
    stream = ExitStack()
    try:
        source = stream.enter_context(connect_sse(
            gw.http, "POST", f"/api/v1/agent-designs/{design_id}/runs",
            json=_start_body(text, session_id, plan, allow_side_effects, rerun), headers=headers,
            timeout=httpx.Timeout(gw.settings.timeout, read=60.0)))
        if not source.response.is_success:
            source.response.read()
            raise error_of(source.response, "DESIGN_NOT_FOUND")
        events = source.iter_sse()
        head = next(events, None)
        if head is None or head.event != "run":
            raise KiongaError("GATEWAY_ERROR", "The run's stream did not start with the run.")
    except httpx.TransportError as exc:
        stream.close()
        raise gw.unreachable(exc) from exc
    except BaseException:
        stream.close()
        raise
    run = _run_data(json.loads(head.data))
    return run, _rest_of(gw, design_id, run["run_id"], stream, events, on_reconnect)


def _rest_of(gw: Gateway, design_id: str, run_id: str, stream: ExitStack,
             events: Iterator[Any], on_reconnect: Callable[[int | None], None] | None
             ) -> Iterator[dict[str, Any]]:
    at = _Position()
    with stream:
        try:
            yield from _read(events, at)
        except (httpx.TransportError, SSEError):
            pass  # resumed below, from the last event seen
    if not at.ended:
        if on_reconnect is not None:
            on_reconnect(at.last_event_id)
        yield from follow(gw, design_id, run_id, at.last_event_id, on_reconnect=on_reconnect)


@dataclass
class _Position:
    """Where a reader of a run's stream is: the last event id seen, and whether the
    terminal event was among them."""

    last_event_id: int | None = None
    ended: bool = False


def _read(frames: Iterator[Any], at: _Position) -> Iterator[dict[str, Any]]:
    """The events of SSE frames up to the terminal one, keeping `at` up to date."""
    for sse in frames:
        if not sse.data:
            continue
        event = json.loads(sse.data)
        if sse.id:
            at.last_event_id = int(sse.id)
        yield event
        if event.get("type") in TERMINAL_EVENTS:
            at.ended = True
            return


def _run_data(run: dict[str, Any]) -> dict[str, Any]:
    return {"run_id": run["id"], **run}


def runs_list(gw: Gateway, design_id: str, *, status: str | None = None,
              limit: int | None = None) -> Result:
    """A design's runs, newest first (among the latest the gateway lists), of `status`
    only if given, at most `limit`; each with its `duration_seconds` once it ended."""
    listed = gw.request("GET", f"/agent-designs/{design_id}/runs",
                        not_found="DESIGN_NOT_FOUND")["runs"]
    chosen = [_listed_run(r) for r in listed if status is None or r["status"] == status]
    return Result({"design_id": design_id, "runs": chosen[:limit] if limit else chosen})


def _listed_run(run: dict[str, Any]) -> dict[str, Any]:
    started, finished = run.get("started_at"), run.get("finished_at")
    duration = (None if not (started and finished) else round(
        (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds(),
        3))
    return {**_run_data(run), "duration_seconds": duration}


def find_run_design(gw: Gateway, run_id: str) -> str:
    """The design a run belongs to, among the designs the caller sees."""
    for design in gw.request("GET", "/agent-designs")["designs"]:
        try:
            gw.request("GET", f"/agent-designs/{design['id']}/runs/{run_id}",
                       not_found="RUN_NOT_FOUND")
            return str(design["id"])
        except KiongaError as exc:
            if exc.code != "RUN_NOT_FOUND":
                raise
    raise KiongaError("RUN_NOT_FOUND", f"No run {run_id} in your projects.",
                      data={"run_id": run_id})


def run_get(gw: Gateway, run_id: str, design_id: str | None = None) -> dict[str, Any]:
    design_id = design_id or find_run_design(gw, run_id)
    try:
        run = gw.request("GET", f"/agent-designs/{design_id}/runs/{run_id}",
                         not_found="RUN_NOT_FOUND")
    except KiongaError as exc:
        exc.data = exc.data or {"run_id": run_id}
        raise
    return _run_data(run)


def run_show(gw: Gateway, run_id: str, design_id: str | None = None) -> Result:
    run = run_get(gw, run_id, design_id)
    check_outcome(run)
    return Result(run)


def check_outcome(run: dict[str, Any]) -> None:
    """Raise the error a finished run stands for (failed, cancelled, rejected); else pass."""
    status = run["status"]
    summary = {k: v for k, v in run.items() if k != "events"}
    if status == "cancelled":
        raise KiongaError("RUN_CANCELLED", "The run was cancelled.", data=summary)
    if status == "failed":
        error = run.get("error") or {}
        code = FAILURE_CODES.get(str(error.get("code")), "RUN_FAILED")
        where = {"node_id": error["node_id"]} if error.get("node_id") else None
        raise KiongaError(code, str(error.get("message") or "The run failed."), where=where,
                          data=summary, details={"failure_code": error.get("code")})
    if status == "completed" and run.get("output") is None:
        rejected = [e for e in run.get("events", []) if e.get("type") == "approval.resolved"
                    and e.get("reason") == "rejected"]
        if rejected:
            raise KiongaError("APPROVAL_REJECTED", "A person rejected the approval, so the "
                              "run ended without output.",
                              where={"node_id": rejected[-1].get("node_id")}, data=summary)


def run_events(gw: Gateway, run_id: str, design_id: str | None = None,
               after: int = -1) -> Result:
    design_id = design_id or find_run_design(gw, run_id)
    events: list[dict[str, Any]] = []
    while True:
        page = gw.request("GET", f"/agent-designs/{design_id}/runs/{run_id}/events",
                          params={"after": after}, not_found="RUN_NOT_FOUND")
        events += page["events"]
        if not page["events"] or page.get("next_after") in (None, after):
            break
        after = page["next_after"]
    return Result({"run_id": run_id, "design_id": design_id, "events": events,
                   "complete": page.get("complete")})


def follow(gw: Gateway, design_id: str, run_id: str, last_event_id: int | None = None,
           *, retries: int = 8, on_reconnect: Callable[[int | None], None] | None = None,
           ) -> Iterator[dict[str, Any]]:
    """The run's events over SSE (stored events and live `node.delta`s) until its terminal
    event; a dropped stream is resumed from the last seen `Last-Event-ID`."""
    path = f"/api/v1/agent-designs/{design_id}/runs/{run_id}/events"
    failures = 0
    at = _Position(last_event_id)
    while True:
        headers = {"Accept": "text/event-stream"}
        if at.last_event_id is not None:
            headers["Last-Event-ID"] = str(at.last_event_id)
        try:
            with connect_sse(gw.http, "GET", path, headers=headers,
                             timeout=httpx.Timeout(gw.settings.timeout, read=60.0)) as source:
                if not source.response.is_success:
                    source.response.read()
                    raise error_of(source.response, "RUN_NOT_FOUND")
                for event in _read(source.iter_sse(), at):
                    failures = 0
                    yield event
                if at.ended:
                    return
        except (httpx.TransportError, SSEError) as exc:
            failures += 1
            if failures > retries:
                raise KiongaError("GATEWAY_UNREACHABLE", f"The event stream broke: {exc}",
                                  data={"run_id": run_id, "last_event_id": at.last_event_id},
                                  hint=f"Resume with `kionga runs events {run_id} --follow`."
                                  ) from exc
        else:
            # The stream ended without the terminal event: ask whether the run is over.
            if run_get(gw, run_id, design_id)["status"] in FINAL_STATUSES:
                failures += 1
                if failures > 2:
                    return
        if on_reconnect is not None:
            on_reconnect(at.last_event_id)
        time.sleep(min(0.2 * 2 ** failures, 5.0))


def wait_stored(gw: Gateway, design_id: str, run_id: str,
                timeout: float = 15.0) -> dict[str, Any]:
    """The run once its row is final: a followed stream sees the terminal event live, a
    moment before the gateway has stored it."""
    deadline = time.monotonic() + timeout
    while True:
        run = run_get(gw, run_id, design_id)
        events = run.get("events") or []
        if run["status"] in FINAL_STATUSES and events and events[-1]["type"] in TERMINAL_EVENTS:
            return run
        if time.monotonic() > deadline:
            return run
        time.sleep(0.1)


def run_cancel(gw: Gateway, run_id: str, design_id: str | None = None) -> Result:
    design_id = design_id or find_run_design(gw, run_id)
    try:
        run = gw.request("POST", f"/agent-designs/{design_id}/runs/{run_id}/cancel",
                         not_found="RUN_NOT_FOUND")
    except KiongaError as exc:
        exc.data = exc.data or {"run_id": run_id}
        raise
    return Result(_run_data(run))


# --- deployed agents ----------------------------------------------------------------------

def agents_list(gw: Gateway, project_id: int | None = None) -> Result:
    return Result({"agents": gw.request("GET", "/agents",
                                        params={"project_id": project_id})["agents"]})


def agent_rollback(gw: Gateway, agent_id: str) -> Result:
    """The agent back on the version it ran before (the gateway verifies its hash)."""
    agent = gw.request("POST", f"/agents/{agent_id}/rollback", not_found="AGENT_NOT_FOUND")
    return Result({**agent, "agent_id": agent["id"]})


def triggers_list(gw: Gateway, agent_id: str) -> Result:
    return Result({"triggers": gw.request("GET", f"/agents/{agent_id}/triggers",
                                          not_found="AGENT_NOT_FOUND")["triggers"]})


def trigger_create(gw: Gateway, agent_id: str, body: dict[str, Any]) -> Result:
    """A new webhook (its secret in this answer only) or schedule of the agent."""
    made = gw.request("POST", f"/agents/{agent_id}/triggers", json=body,
                      not_found="AGENT_NOT_FOUND")
    return Result({**made, "trigger_id": made["id"]})


def trigger_show(gw: Gateway, agent_id: str, trigger_id: str) -> Result:
    found = gw.request("GET", f"/agents/{agent_id}/triggers/{trigger_id}",
                       not_found="TRIGGER_NOT_FOUND")
    return Result({**found, "trigger_id": found["id"]})


def trigger_update(gw: Gateway, agent_id: str, trigger_id: str,
                   changes: dict[str, Any]) -> Result:
    found = gw.request("PATCH", f"/agents/{agent_id}/triggers/{trigger_id}", json=changes,
                       not_found="TRIGGER_NOT_FOUND")
    return Result({**found, "trigger_id": found["id"]})


def trigger_delete(gw: Gateway, agent_id: str, trigger_id: str) -> Result:
    gw.exchange("DELETE", f"/agents/{agent_id}/triggers/{trigger_id}",
                not_found="TRIGGER_NOT_FOUND")
    return Result({"trigger_id": trigger_id, "deleted": True})


# --- members ----------------------------------------------------------------------------

def member_invite(gw: Gateway, project_id: int, user: str, role: str) -> Result:
    """Invite a user name or an email address (project admins): the same answer whoever
    it names; an email address nobody has gets a one-time set-password link by email."""
    invitation = gw.request("POST", f"/projects/{project_id}/members",
                            json={"user": user, "role": role})
    return Result({**invitation, "project_id": project_id})


# --- approvals --------------------------------------------------------------------------

def approvals_list(gw: Gateway, *, status: str | None = "pending",
                   project_id: int | None = None, run_id: str | None = None,
                   limit: int | None = None) -> Result:
    found = gw.request("GET", "/agent-approvals", params={
        "status": status, "project_id": project_id, "run_id": run_id, "limit": limit})
    return Result({"approvals": found["approvals"], "next_before": found.get("next_before")})
