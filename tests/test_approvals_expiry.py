"""Expiry on time: the beat sweep stores pending requests past their deadline as expired,
whether or not anyone reads them, and audits each once."""

from __future__ import annotations

from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from approvals.actions import do_cancel_pending_approvals_of, refresh_expiry
from approvals.models import ApprovalRequest
from approvals.tasks import expire_overdue_task
from kionga.celery import app
from kionga.models import AuditEvent, Project
from tests.approvals_helpers import pending, waiting_run


def _status(approval: ApprovalRequest) -> str:
    return ApprovalRequest.objects.get(pk=approval.pk).status


@pytest.mark.allow_output  # the sweep that expired something logs a line
def test_it_expires_overdue_requests_without_a_reader(alice: User, carol: User,
                                                      acme: Project, caplog: Any) -> None:
    run = waiting_run(alice, acme)
    overdue, in_time = pending(run, seconds=-1), pending(run, seconds=60)
    decided = pending(run, seconds=-1)
    ApprovalRequest.objects.filter(pk=decided.pk).update(status="approved", decided_by=carol)
    assert expire_overdue_task() == 1
    assert (_status(overdue), _status(in_time), _status(decided)) == (
        "expired", "pending", "approved")
    event = AuditEvent.objects.get(action="approval.expired")
    assert (event.project, event.actor, event.target_id, event.details) == (
        acme, None, str(overdue.pk), {"run_id": str(run.pk)})
    assert expire_overdue_task() == 0  # once: nothing left, no second audit event
    # One line for the sweep that expired a request, none for the one that did not.
    assert [r.getMessage() for r in caplog.records if r.name == "approvals.tasks"] == [
        "Expired 1 overdue approval request(s)."]
    assert refresh_expiry(overdue).status == "expired"
    assert AuditEvent.objects.filter(action="approval.expired").count() == 1


def test_it_runs_the_sweep_every_second_on_the_beat_worker() -> None:
    entry: dict[str, Any] = next(e for e in settings.CELERY_BEAT_SCHEDULE.values()
                                 if e["task"] == "approvals.expire_overdue")
    assert float(entry["schedule"]) <= 1.0
    app.loader.import_default_modules()
    assert app.tasks["approvals.expire_overdue"].run is expire_overdue_task.run


def test_it_expires_rather_than_cancels_an_overdue_request_at_the_runs_end(
        alice: User, acme: Project) -> None:
    run = waiting_run(alice, acme)
    overdue, in_time = pending(run, seconds=-1), pending(run, seconds=60)
    assert do_cancel_pending_approvals_of([run]) == 1
    assert (_status(overdue), _status(in_time)) == ("expired", "cancelled")
