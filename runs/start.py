"""Starting a run: parse the request, check the graph and capacity, store, dispatch."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from contracts.hashing import canonical_json
from designs.actions import graph_report
from designs.models import Design
from kionga import audit
from kionga.celery import app as celery_app
from kionga.errors import APIError, check_json_object
from runs import dispatch, quota
from runs.credentials import issue_credential
from runs.models import Run
from runs.nested import checked_subflows, run_resources

MAX_INPUT_CHARS = 100_000
MAX_HISTORY_TURNS = 200
SESSION_TURNS = 50


@dataclass
class StartRequest:
    input: str
    session_id: str | None
    history: list[dict[str, Any]] | None
    allow_side_effects: bool
    stop_after: str | None
    revision: int | None

    def fingerprint(self) -> str:
        """What makes two starts 'the same body' for Idempotency-Key replays."""
        return hashlib.sha256(canonical_json(self.__dict__).encode()).hexdigest()


def _bad(message: str, field: str) -> APIError:
    return APIError(400, "invalid_request", message, {"field": field})


def check_start_request(body: Any) -> StartRequest:
    body = check_json_object({} if body is None else body)
    text = body.get("input", "")
    if not isinstance(text, str) or len(text) > MAX_INPUT_CHARS:
        raise _bad(f"input must be a string of at most {MAX_INPUT_CHARS} characters.", "input")
    session_id = body.get("session_id")
    if session_id is not None and (not isinstance(session_id, str) or len(session_id) > 200):
        raise _bad("session_id must be a string of at most 200 characters.", "session_id")
    allow = body.get("allow_side_effects", False)
    if not isinstance(allow, bool):
        raise _bad("allow_side_effects must be true or false.", "allow_side_effects")
    stop_after = body.get("stop_after")
    if stop_after is not None and not isinstance(stop_after, str):
        raise _bad("stop_after must be a node ID.", "stop_after")
    revision = body.get("revision")
    if revision is not None and (type(revision) is not int or revision < 1):
        raise _bad("revision must be a positive integer.", "revision")
    return StartRequest(text, session_id or None, _check_history(body.get("history")), allow,
                        stop_after or None, revision)


def _check_history(history: Any) -> list[dict[str, Any]] | None:
    if history is None:
        return None
    ok = isinstance(history, list) and len(history) <= MAX_HISTORY_TURNS and all(
        isinstance(t, dict) and t.get("role") in ("user", "assistant", "system")
        and isinstance(t.get("content"), str) for t in history
    )
    if not ok:
        raise _bad(f"history must be a list of at most {MAX_HISTORY_TURNS} turns "
                   '{"role": "user"|"assistant"|"system", "content": str}.', "history")
    return [{"role": t["role"], "content": t["content"]} for t in history]


def check_runnable_graph(design: Design, revision: int | None) -> tuple[int, dict[str, Any], str]:
    """The normalized graph and hash of the revision to run, or 422 validation_failed."""
    number = revision or design.revision
    stored = design.revisions.filter(number=number).first()
    if stored is None:
        raise APIError(404, "not_found", f"Revision {number} of this design does not exist.")
    report = graph_report(stored.graph, design.project)
    if not report.runnable or report.graph is None or report.content_sha256 is None:
        raise APIError(422, "validation_failed", "The graph has validation errors.",
                       {"issues": [i.to_dict() for i in report.issues]})
    return number, report.graph, report.content_sha256


def check_stop_after(graph: dict[str, Any], stop_after: str | None) -> None:
    if stop_after is not None and stop_after not in {n["id"] for n in graph["nodes"]}:
        raise _bad(f"stop_after names no node of the graph: {stop_after!r}.", "stop_after")


def session_history(design: Design, session_id: str | None) -> list[dict[str, Any]]:
    """Earlier turns of the same session (completed runs of this design), oldest first."""
    if not session_id:
        return []
    runs = (Run.objects.filter(design=design, session_id=session_id, status="completed")
            .order_by("-created_at").values_list("input", "output")[: SESSION_TURNS // 2])
    turns: list[dict[str, Any]] = []
    for text, output in reversed(list(runs)):
        turns += [{"role": "user", "content": text},
                  {"role": "assistant", "content": output or ""}]
    return turns


@dataclass(frozen=True)
class Target:
    """What a run executes: a design's revision, or a published version of it."""

    design: Design
    revision: int
    graph: dict[str, Any]
    content_sha256: str
    version_id: str = ""
    # A published version's side effects were approved when it was published.
    side_effects_approved: bool = False


def do_start_run(user: User, design: Design, request: StartRequest) -> Run:
    dispatch.check_runner_configured()
    number, graph, sha = check_runnable_graph(design, request.revision)
    return start_target(user, Target(design, number, graph, sha), request)


def start_target(user: User, target: Target, request: StartRequest) -> Run:
    check_stop_after(target.graph, request.stop_after)
    subflows = checked_subflows(target.design.project, target.graph)
    history = request.history if request.history is not None else session_history(
        target.design, request.session_id)
    run_id = uuid.uuid4()
    try:
        quota.take_slot(str(run_id), target.design.project_id)
        return _store_and_send(user, target, request, run_id, history, subflows)
    except quota.REDIS_ERRORS:
        # A Redis restart is a moment of unavailability, not a server error. A run
        # stored before the send failed ends `runner_lost` when its slot's lease runs out.
        raise quota.redis_unavailable() from None


def _store_and_send(user: User, target: Target, request: StartRequest, run_id: uuid.UUID,
                    history: list[dict[str, Any]], subflows: list[dict[str, Any]]) -> Run:
    design = target.design
    try:
        with transaction.atomic():
            run = Run.objects.create(
                id=run_id, project=design.project, design=design, revision=target.revision,
                version_id=target.version_id, content_sha256=target.content_sha256,
                input=request.input, session_id=request.session_id or "",
                allow_side_effects=request.allow_side_effects or target.side_effects_approved,
                stop_after=request.stop_after or "", created_by=user,
                resources=run_resources(target.graph, subflows),
            )
            credential = issue_credential(run, fresh=True)
            details: dict[str, Any] = {"design_id": str(design.pk), "revision": target.revision}
            if target.version_id:
                details["version_id"] = target.version_id
            audit.record("run.started", project=design.project, actor=user, target_type="run",
                         target_id=run.pk, details=details)
            payload = dispatch.build_payload(run, target.graph, history, credential, subflows)
            transaction.on_commit(lambda: dispatch.send_run(celery_app, payload))
    except BaseException:
        _release_quietly(str(run_id))
        raise
    return run


def _release_quietly(run_id: str) -> None:
    try:
        dispatch.release_capacity(run_id)
    except quota.REDIS_ERRORS:
        pass  # Redis is down: the slot's lease runs out on its own
