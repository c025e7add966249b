"""Approval actions: ``check_*`` validate and authorize, ``do_*`` write and audit.

Expiry happens on time: the ``beat`` process sweeps pending requests past their
expires_at every second (``approvals.tasks``), and whoever reads or decides one before
the sweep does stores it as ``expired`` first. Each is a conditional UPDATE per request,
so a decision racing with expiry cannot both win, and only the winner writes the
``approval.expired`` audit event.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Literal

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.utils import timezone

from approvals import reasons
from approvals.models import ApprovalRequest
from kionga import audit, prepared_sql
from kionga.access import AnyUser, check_project_access
from kionga.errors import APIError, not_found
from kionga.models import Role
from kionga.notices import send_notice
from runs.models import Run
from runs.quota import park_run, unpark_run

Decision = Literal["approve", "reject"]
DECISIONS: dict[Decision, str] = {"approve": ApprovalRequest.Status.APPROVED,
                                  "reject": ApprovalRequest.Status.REJECTED}
NOT_FOUND_MESSAGE = "Approval request not found."


@dataclass(frozen=True)
class NewApproval:
    node_id: str
    message: str
    preview: str
    timeout_seconds: int


def do_request_approval(run: Run, new: NewApproval) -> ApprovalRequest:
    """The run's request; while it waits, the run holds no runner slot (parked, runs.quota:
    429 `parked_run_quota` when its project or the runner parks its most already)."""
    parked = park_run(str(run.pk), run.project_id)
    try:
        approval = ApprovalRequest.objects.create(
            project=run.project, run=run, node_id=new.node_id, message=new.message,
            preview=new.preview,
            expires_at=timezone.now() + timedelta(seconds=new.timeout_seconds),
        )
    except BaseException:
        if parked:
            unpark_run(str(run.pk), run.project_id)
        raise
    audit.record("approval.requested", project=run.project, actor=run.created_by,
                 target_type="approval", target_id=approval.pk,
                 details={"run_id": str(run.pk), "node_id": new.node_id})
    send_notice(run.project_id, "approval.requested", approval_id=approval.pk, run_id=run.pk)
    return approval


def check_approval_access(user: AnyUser, approval_id: uuid.UUID) -> ApprovalRequest:
    """A request of one of the caller's projects (any role; expiry applied), else 404."""
    approval = ApprovalRequest.objects.filter(pk=approval_id).first()
    if approval is None:
        raise not_found(NOT_FOUND_MESSAGE)
    check_project_access(user, approval.project_id)
    return refresh_expiry(approval)


def check_run_approval(run: Run, approval_id: uuid.UUID) -> ApprovalRequest:
    """The run's own request (expiry applied); any other ID is the same 404."""
    approval = ApprovalRequest.objects.filter(pk=approval_id, run=run).first()
    if approval is None:
        raise unknown_approval()
    approval = refresh_expiry(approval)
    if approval.status != ApprovalRequest.Status.PENDING and not waits_on_people(run):
        unpark_run(str(run.pk), run.project_id)  # the run goes on: its slot back
    return approval


def waits_on_people(run: Run) -> bool:
    """Whether another request of the run still waits (parallel branches): the run stays
    parked until none does (one past its deadline no longer counts: it is expired)."""
    return ApprovalRequest.objects.filter(run=run, status=ApprovalRequest.Status.PENDING,
                                          expires_at__gt=timezone.now()).exists()


def unknown_approval() -> APIError:
    """What a run learns of a request that is not its own (or no request at all)."""
    return APIError(404, "resource_denied", NOT_FOUND_MESSAGE)


def refresh_expiry(approval: ApprovalRequest) -> ApprovalRequest:
    """Store a pending request past its deadline as expired; returns it as stored."""
    if approval.status == ApprovalRequest.Status.PENDING and approval.expires_at <= timezone.now():
        _expire(approval)
        approval.refresh_from_db()
    return approval


# Per sweep: a backlog (the sweep was down) is worked off a batch a second.
EXPIRE_BATCH = 500


def expire_overdue(rows: QuerySet[ApprovalRequest] | None = None) -> int:
    """Store the pending requests (of rows, default all) past their deadline as expired,
    oldest deadline first. Returns how many this call expired."""
    found = ApprovalRequest.objects.all() if rows is None else rows
    overdue = found.filter(status=ApprovalRequest.Status.PENDING,
                           expires_at__lte=timezone.now()).order_by("expires_at")
    return sum(_expire(a) for a in overdue.select_related("project")[:EXPIRE_BATCH])


def _expire(approval: ApprovalRequest) -> bool:
    """Expire one request if it is still pending; audit it if this call did."""
    won = ApprovalRequest.objects.filter(
        pk=approval.pk, status=ApprovalRequest.Status.PENDING, expires_at__lte=timezone.now()
    ).update(status=ApprovalRequest.Status.EXPIRED, reason=reasons.expired(approval.expires_at))
    if won:
        audit.record("approval.expired", project=approval.project, target_type="approval",
                     target_id=approval.pk, details={"run_id": str(approval.run_id or "")})
        send_notice(approval.project_id, "approval.expired", approval_id=approval.pk,
                    run_id=approval.run_id)
    return bool(won)


_ANY_PENDING = (f"SELECT 1 FROM {ApprovalRequest._meta.db_table} "
                "WHERE run_id = ANY(%b::uuid[]) AND status = %b::text LIMIT 1")


def any_pending(runs: Sequence[Run]) -> bool:
    """Whether one of the runs has a pending request."""
    return bool(prepared_sql.fetch_all(
        _ANY_PENDING, [[run.pk for run in runs], str(ApprovalRequest.Status.PENDING)]))


def do_cancel_pending_approvals_of(runs: Sequence[Run]) -> int:
    """The runs ended (any way): their pending requests become cancelled, each with how
    its run ended — except those already past their deadline, which expired first.
    Returns how many were cancelled."""
    if not any_pending(runs):
        return 0  # most runs have no approval step: one prepared read, not the ORM's two
    rows = ApprovalRequest.objects.filter(run__in=runs)
    expire_overdue(rows)
    pending = rows.filter(status=ApprovalRequest.Status.PENDING)
    waiting = set(pending.values_list("run_id", flat=True))
    for run in runs:
        if run.pk in waiting:
            send_notice(run.project_id, "approval.cancelled", run_id=run.pk)
    return sum(pending.filter(run=run).update(status=ApprovalRequest.Status.CANCELLED,
                                              reason=reasons.run_ended(run.status, run.error))
               for run in runs if run.pk in waiting)


def do_decide(user: User, approval: ApprovalRequest, decision: Decision,
              comment: str = "") -> ApprovalRequest:
    """Approve or reject a pending request (editor or admin of its project), else 409."""
    check_project_access(user, approval.project_id, Role.EDITOR)
    now = timezone.now()
    # One conditional UPDATE: concurrent deciders and expiry cannot both succeed.
    won = ApprovalRequest.objects.filter(
        pk=approval.pk, status=ApprovalRequest.Status.PENDING, expires_at__gt=now
    ).update(status=DECISIONS[decision], comment=comment, decided_by=user, decided_at=now,
             reason=reasons.decided(decision, user.get_username(), comment))
    refresh_expiry(approval)
    approval.refresh_from_db()
    if not won:
        raise APIError(409, "approval_not_pending",
                       f"This request is {approval.status}; only pending requests can be decided.",
                       {"status": approval.status})
    audit.record("approval.decided", project=approval.project, actor=user,
                 target_type="approval", target_id=approval.pk,
                 details={"decision": decision, "comment": comment,
                          "run_id": str(approval.run_id or "")})
    send_notice(approval.project_id, "approval.decided", approval_id=approval.pk,
                run_id=approval.run_id, status=approval.status)
    return approval
