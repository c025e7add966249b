"""What a stored event does to its run: status, output, usage, and the end of a run.

Called by the event ingester (and the reaper) inside a transaction. The end of a run
revokes its credential, tells the apps above (`runs_ended`: approvals cancel the run's
pending requests), writes the audit event and, once committed, shrinks its live stream
and frees its slot (runs/live_streams.py), whoever ended it, and sends the project's
run.ended notice (kionga.notices); the ingester sends run.started (`tell_started`).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from kionga import prepared_sql
from kionga.models import AuditEvent
from kionga.notices import notice, send_notices
from runner.protocol import TERMINAL_EVENTS
from runs.credentials import revoke_credentials
from runs.live_streams import after_runs_ended
from runs.models import FINAL_STATUSES, Run
from runs.signals import runs_ended


def apply_event(run: Run, event: dict[str, Any]) -> list[str]:
    """Update `run` in memory for one event; returns the changed field names."""
    kind = event.get("type")
    if kind == "run.started" and run.status == "queued":
        run.status, run.started_at = "running", _at(event)
        return ["status", "started_at"]
    if kind == "approval.requested" and run.status == "running":
        run.status = "waiting"
        return ["status"]
    if kind == "approval.resolved" and run.status == "waiting":
        run.status = "running"
        return ["status"]
    if kind in TERMINAL_EVENTS and run.status not in FINAL_STATUSES:
        return _finish(run, TERMINAL_EVENTS[str(kind)], event)
    return []


def _finish(run: Run, status: str, event: dict[str, Any]) -> list[str]:
    run.status, run.finished_at = status, _at(event)
    run.output = event.get("output") if status == "completed" else None
    error = event.get("error")
    if status == "failed":
        run.error = error if isinstance(error, dict) else {
            "code": str(event.get("reason") or "failed"), "message": "The run failed."}
    usage = event.get("usage")
    if isinstance(usage, dict) and isinstance(usage.get("tokens"), int):
        # The gateway adds model-resource tokens as they are billed; the engine's total
        # counts every model call, so the larger is the truth.
        run.tokens = max(run.tokens, usage["tokens"])
    if run.started_at is None:
        run.started_at = run.finished_at
    return ["status", "finished_at", "output", "error", "tokens", "started_at"]


def do_finish_run(run: Run) -> None:
    do_finish_runs([run])


def do_finish_runs(runs: list[Run], *, free_slots: bool = True) -> None:
    """The end of runs, in the same transaction as their final status: nobody can see
    a run ended while its credential or approvals still live. A few statements for
    the whole batch, whatever its size (the ingester ends many runs at once).
    `free_slots=False`: whoever wrote the runs' endings freed their slots with them."""
    if not runs:
        return
    revoke_credentials(runs)
    runs_ended.send(sender=Run, runs=runs)
    # One audit row per run, written together (kionga.audit.record writes one at a time).
    prepared_sql.insert_rows([
        AuditEvent(project_id=run.project_id, action=_audit_action(run), target_type="run",
                   target_id=str(run.pk), details={"status": run.status, "error": run.error})
        for run in runs
    ])
    # Once committed: their live streams shrink, and slots the gateway freed go back.
    transaction.on_commit(lambda: after_runs_ended(runs, free_slots=free_slots))
    send_notices([(run.project_id, notice("run.ended", run_id=run.pk, design_id=run.design_id,
                                          status=run.status)) for run in runs])


def tell_started(runs: list[Run]) -> None:
    """Notices of runs that began running (their run.started stored), once committed."""
    send_notices([(run.project_id, notice("run.started", run_id=run.pk,
                                          design_id=run.design_id)) for run in runs])


def _audit_action(run: Run) -> str:
    return "run.cancelled" if run.status == "cancelled" else "run.finished"


def _at(event: dict[str, Any]) -> datetime:
    parsed = parse_datetime(str(event.get("at") or ""))
    return parsed or timezone.now()
