"""Approval actions: ``check_*`` validate and authorize, ``do_*`` write and audit.

Expiry is lazy: nothing sweeps pending requests; whoever reads or decides one past
its expires_at stores it as ``expired`` first (a conditional UPDATE, so a decision
racing with expiry cannot both win).
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone

from approvals.models import ApprovalRequest
from kionga import audit
from kionga.access import check_project_access
from kionga.errors import APIError, check_json_object
from kionga.models import Role
from runs.models import Run

MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS = 10, 290
MAX_TEXT = 2000  # message and preview arrive redacted and truncated to 2,000 characters
MAX_NODE_ID = 200
DECISIONS = {"approve": ApprovalRequest.Status.APPROVED, "reject": ApprovalRequest.Status.REJECTED}
NOT_FOUND_MESSAGE = "Approval request not found."


@dataclass(frozen=True)
class NewApproval:
    node_id: str
    message: str
    preview: str
    timeout_seconds: int


def invalid(message: str) -> APIError:
    return APIError(400, "invalid_request", message)


def check_new_approval(body: Any) -> NewApproval:
    """The create body of POST agent-approvals, or 400."""
    body = check_json_object(body)
    node_id = _text(body, "node_id", MAX_NODE_ID, required=True)
    message = _text(body, "message", MAX_TEXT, required=True)
    preview = _text(body, "preview", MAX_TEXT, required=False)
    timeout = body.get("timeout_seconds")
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not (
        MIN_TIMEOUT_SECONDS <= timeout <= MAX_TIMEOUT_SECONDS
    ):
        raise invalid(f"timeout_seconds must be an integer from {MIN_TIMEOUT_SECONDS} "
                      f"to {MAX_TIMEOUT_SECONDS}.")
    return NewApproval(node_id, message, preview, timeout)


def _text(body: dict[str, Any], name: str, limit: int, *, required: bool) -> str:
    value = body.get(name, None if required else "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise invalid(f"{name} must be a non-empty string." if required
                      else f"{name} must be a string.")
    if len(value) > limit:
        raise invalid(f"{name} must be at most {limit} characters.")
    return value


def do_request_approval(run: Run, new: NewApproval) -> ApprovalRequest:
    approval = ApprovalRequest.objects.create(
        project=run.project, run=run, node_id=new.node_id, message=new.message,
        preview=new.preview,
        expires_at=timezone.now() + timedelta(seconds=new.timeout_seconds),
    )
    audit.record("approval.requested", project=run.project, actor=run.created_by,
                 target_type="approval", target_id=approval.pk,
                 details={"run_id": str(run.pk), "node_id": new.node_id})
    return approval


def check_run_approval(run: Run, approval_id: str) -> ApprovalRequest:
    """The run's own request (expiry applied); any other ID is the same 404."""
    try:
        key = uuid.UUID(approval_id)
    except ValueError:
        raise APIError(404, "resource_denied", NOT_FOUND_MESSAGE) from None
    approval = ApprovalRequest.objects.filter(pk=key, run=run).first()
    if approval is None:
        raise APIError(404, "resource_denied", NOT_FOUND_MESSAGE)
    return refresh_expiry(approval)


def refresh_expiry(approval: ApprovalRequest) -> ApprovalRequest:
    """Store a pending request past its deadline as expired; returns it as stored."""
    pending = ApprovalRequest.Status.PENDING
    if approval.status == pending and approval.expires_at <= timezone.now():
        ApprovalRequest.objects.filter(pk=approval.pk, status=pending).update(
            status=ApprovalRequest.Status.EXPIRED
        )
        approval.refresh_from_db()
    return approval


def do_cancel_pending_approvals_of(runs: Sequence[Run]) -> int:
    """The runs ended (any way): their pending requests become cancelled. Returns how many."""
    return ApprovalRequest.objects.filter(
        run__in=runs, status=ApprovalRequest.Status.PENDING
    ).update(status=ApprovalRequest.Status.CANCELLED)


def do_decide(user: User, approval: ApprovalRequest, decision: str,
              comment: str = "") -> ApprovalRequest:
    """Approve or reject a pending request (editor or admin of its project), else 409."""
    check_project_access(user, approval.project_id, Role.EDITOR)
    if decision not in DECISIONS:
        raise invalid("decision must be approve or reject.")
    if not isinstance(comment, str) or len(comment) > MAX_TEXT:
        raise invalid(f"comment must be a string of at most {MAX_TEXT} characters.")
    now = timezone.now()
    # One conditional UPDATE: concurrent deciders and expiry cannot both succeed.
    won = ApprovalRequest.objects.filter(
        pk=approval.pk, status=ApprovalRequest.Status.PENDING, expires_at__gt=now
    ).update(status=DECISIONS[decision], comment=comment, decided_by=user, decided_at=now)
    refresh_expiry(approval)
    approval.refresh_from_db()
    if not won:
        raise APIError(409, "approval_not_pending",
                       f"This request is {approval.status}; only pending requests can be decided.",
                       {"status": approval.status})
    audit.record("approval.decided", project=approval.project, actor=user,
                 target_type="approval", target_id=approval.pk,
                 details={"decision": decision, "run_id": str(approval.run_id or "")})
    return approval
