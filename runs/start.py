"""Starting a run: parse the request, check the graph and capacity, store, dispatch."""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from contracts.hashing import canonical_json
from designs.models import Design
from designs.pins import design_run_reuse
from designs.validation import check_runnable_revision
from kionga import audit, prepared_sql
from kionga.celery import app as celery_app
from kionga.errors import invalid_field
from runner import tracing
from runner.request import ScriptedApprovals
from runs import dispatch, quota, replay, start_sql
from runs.credentials import new_credential
from runs.models import Run
from runs.nested import checked_subflows, run_resources

TRACE_SERVICE = "kionga-gateway"

SESSION_TURNS = 50


@dataclass
class StartRequest:
    input: str
    session_id: str | None
    history: list[dict[str, Any]] | None
    allow_side_effects: bool
    stop_after: str | None
    revision: int | None
    # A re-run (runs/replay.py): the recorded run and the node to run from.
    from_run: str | None = None
    from_node: str | None = None
    # The caller's W3C traceparent header (runner.tracing): not part of the body.
    traceparent: str | None = None

    @classmethod
    def of(cls, body: dict[str, Any]) -> StartRequest:
        """From the body runs.serializers.StartRunSerializer validated."""
        history = body["history"]
        from_run = body.get("from_run")
        return cls(body["input"], body["session_id"] or None,
                   None if history is None else [dict(turn) for turn in history],
                   body["allow_side_effects"], body["stop_after"] or None, body["revision"],
                   None if from_run is None else str(from_run), body.get("from_node") or None)

    def fingerprint(self) -> str:
        """What makes two starts 'the same body' for Idempotency-Key replays."""
        # A plain start's fingerprint is what it was before re-runs existed.
        fields = {k: v for k, v in self.__dict__.items() if k != "traceparent"
                  and (v is not None or k not in ("from_run", "from_node"))}
        return hashlib.sha256(canonical_json(fields).encode()).hexdigest()


def check_runnable_graph(design: Design, revision: int | None) -> tuple[int, dict[str, Any], str]:
    """The normalized graph and hash of the revision to run, or 404/422."""
    stored, report = check_runnable_revision(design, revision)
    assert report.graph is not None and report.content_sha256 is not None
    return stored.number, report.graph, report.content_sha256


def check_stop_after(graph: dict[str, Any], stop_after: str | None) -> None:
    if stop_after is not None and stop_after not in {n["id"] for n in graph["nodes"]}:
        raise invalid_field("stop_after", f"No node of the graph has the ID {stop_after!r}.")


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
    # {backend, model} the runner asks for `llm` nodes instead of its own
    # MLAIOPS_LLM_BACKEND/MODEL, at its own base URL (an evaluation's judge run).
    platform_llm: dict[str, str] | None = None
    # A design-time run's pinned outputs as `reuse` entries (designs.pins): only a run of
    # a design's revision started by a person takes them, never a version's, an
    # evaluation's or a deployed agent's.
    pins: dict[str, Any] = field(default_factory=dict)


def do_start_run(user: User, design: Design, request: StartRequest) -> Run:
    dispatch.check_runner_configured()
    number, graph, sha = check_runnable_graph(design, request.revision)
    return start_target(user, Target(design, number, graph, sha,
                                     pins=design_run_reuse(design, graph)), request)


def start_target(user: User, target: Target, request: StartRequest,
                 counting: quota.ThrottleCount | None = None, *,
                 scripted_approvals: ScriptedApprovals | None = None) -> Run:
    """Start `target` (`counting`: the request's API throttles, not counted yet: counted
    with the slot, runs.quota.take_slot). `scripted_approvals`: an evaluation's run,
    whose approvals resolve without asking anyone (never set from a request body)."""
    check_stop_after(target.graph, request.stop_after)
    source = replay.check_source_run(target.design, request.from_run, request.from_node,
                                     target.graph)
    reuse: dict[str, Any] = {}
    if source is not None and request.from_node is not None:
        if request.input and request.input != source.input:
            raise invalid_field("input", "A re-run takes the recorded run's input: leave "
                                "input out.")
        reuse = replay.check_reuse(source, request.from_node, target.graph)
        request = replace(request, input=source.input)
    # A pin wins over a recorded outcome: the designer fixed that node's output.
    reuse = {**reuse, **target.pins}
    subflows = checked_subflows(target.design.project, target.graph)
    history = request.history if request.history is not None else session_history(
        target.design, request.session_id)
    run_id = uuid.uuid4()
    try:
        # The run's trace starts here (runner.tracing): its task carries this span's
        # traceparent to the runner. Nothing when tracing is off.
        with tracing.request_span(TRACE_SERVICE, "kionga.run.start", request.traceparent,
                                  {"kionga.run.id": str(run_id),
                                   "kionga.project.id": target.design.project_id,
                                   "kionga.design.id": str(target.design.pk)}):
            lease = quota.take_slot(str(run_id), target.design.project_id, counting)
            return _store_and_send(user, target, request, run_id, history, subflows, lease,
                                   scripted_approvals, reuse)
    except quota.REDIS_ERRORS:
        # A Redis restart is a moment of unavailability, not a server error. A run
        # stored before the send failed ends `runner_lost` when its slot's lease runs out.
        raise quota.redis_unavailable() from None


def _store_and_send(user: User, target: Target, request: StartRequest, run_id: uuid.UUID,
                    history: list[dict[str, Any]], subflows: list[dict[str, Any]],
                    lease: str, scripted_approvals: ScriptedApprovals | None,
                    reuse: dict[str, Any] | None = None) -> Run:
    design = target.design
    try:
        # Built positionally (prepared_sql.new_row): it is stored by start_sql, not save().
        run = prepared_sql.new_row(
            Run, id=run_id, project=design.project, design=design, revision=target.revision,
            version_id=target.version_id, content_sha256=target.content_sha256,
            input=request.input, session_id=request.session_id or "",
            allow_side_effects=request.allow_side_effects or target.side_effects_approved,
            stop_after=request.stop_after or "", created_by=user,
            from_run_id=request.from_run, from_node=request.from_node or "",
            resources=run_resources(target.graph, subflows),
        )
        credential, credential_row = new_credential(run)
        details: dict[str, Any] = {"design_id": str(design.pk), "revision": target.revision}
        if target.version_id:
            details["version_id"] = target.version_id
        # The run, its credential and the audit row in one statement, atomic on its own
        # (runs.start_sql): no BEGIN and COMMIT round trips around it.
        start_sql.insert_started(run, credential_row, audit.row(
            "run.started", project=design.project, actor=user, target_type="run",
            target_id=run.pk, details=details))
        payload = dispatch.build_payload(run, target.graph, history, credential, lease,
                                         subflows, platform_llm=target.platform_llm,
                                         scripted_approvals=scripted_approvals, reuse=reuse)
        # At once in autocommit; after the caller's commit inside its transaction.
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
