"""approvals.actions: do_decide, do_cancel_pending_approvals_of and lazy expiry."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from approvals.actions import (
    NewApproval,
    do_cancel_pending_approvals_of,
    do_decide,
    do_request_approval,
)
from approvals.models import ApprovalRequest
from kionga.errors import APIError
from kionga.models import AuditEvent, Project
from runs.models import Run
from tests.internal_helpers import start_run

NEW = NewApproval(node_id="ask", message="Ship it?", preview="", timeout_seconds=60)


@pytest.fixture
def run(carol: User, acme: Project) -> Run:
    return start_run(carol, acme)[0]


@pytest.fixture
def approval(run: Run) -> ApprovalRequest:
    return do_request_approval(run, NEW)


def error_of(call: object) -> APIError:
    with pytest.raises(APIError) as caught:
        call()  # type: ignore[operator]
    return caught.value


def test_it_approves_a_pending_request(alice: User, approval: ApprovalRequest) -> None:
    decided = do_decide(alice, approval, "approve", "looks fine")
    stored = ApprovalRequest.objects.get(pk=approval.pk)
    assert (stored.status, stored.comment, stored.decided_by) == ("approved", "looks fine", alice)
    assert stored.decided_at is not None and decided.status == "approved"


def test_it_rejects_a_pending_request(carol: User, approval: ApprovalRequest) -> None:
    do_decide(carol, approval, "reject", "no")
    assert ApprovalRequest.objects.get(pk=approval.pk).status == "rejected"


def test_it_records_an_audit_event(alice: User, approval: ApprovalRequest) -> None:
    do_decide(alice, approval, "approve")
    event = AuditEvent.objects.get(action="approval.decided")
    assert (event.actor, event.target_id, event.details["decision"]) == (
        alice, str(approval.pk), "approve")


@pytest.mark.parametrize("status", ["approved", "rejected", "expired", "cancelled"])
def test_it_refuses_a_request_that_is_not_pending(
    alice: User, approval: ApprovalRequest, status: str
) -> None:
    ApprovalRequest.objects.filter(pk=approval.pk).update(status=status)
    error = error_of(lambda: do_decide(alice, approval, "approve"))
    assert (error.status_code, error.code) == (409, "approval_not_pending")
    assert ApprovalRequest.objects.get(pk=approval.pk).status == status
    assert not AuditEvent.objects.filter(action="approval.decided").exists()


def test_it_expires_instead_of_deciding_past_the_deadline(
    alice: User, approval: ApprovalRequest
) -> None:
    ApprovalRequest.objects.filter(pk=approval.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1))
    approval.refresh_from_db()
    error = error_of(lambda: do_decide(alice, approval, "approve"))
    assert (error.status_code, error.code) == (409, "approval_not_pending")
    assert ApprovalRequest.objects.get(pk=approval.pk).status == "expired"


def test_it_lets_only_one_of_two_deciders_win(
    alice: User, carol: User, approval: ApprovalRequest
) -> None:
    stale = ApprovalRequest.objects.get(pk=approval.pk)
    do_decide(alice, approval, "approve")
    error = error_of(lambda: do_decide(carol, stale, "reject"))
    assert error.code == "approval_not_pending"
    assert ApprovalRequest.objects.get(pk=approval.pk).status == "approved"


def test_it_refuses_a_viewer(bob: User, approval: ApprovalRequest) -> None:
    assert error_of(lambda: do_decide(bob, approval, "approve")).status_code == 403
    assert ApprovalRequest.objects.get(pk=approval.pk).status == "pending"


def test_it_hides_the_request_from_another_tenant(
    mallory: User, approval: ApprovalRequest
) -> None:
    assert error_of(lambda: do_decide(mallory, approval, "approve")).status_code == 404


def test_it_cancels_the_pending_requests_of_a_run(
    alice: User, run: Run, approval: ApprovalRequest, carol: User, acme: Project
) -> None:
    decided = do_request_approval(run, NEW)
    do_decide(alice, decided, "approve")
    other_run = start_run(carol, acme)[0]
    other = do_request_approval(other_run, NEW)
    assert do_cancel_pending_approvals_of([run]) == 1
    statuses = {a.pk: a.status for a in ApprovalRequest.objects.all()}
    assert statuses == {approval.pk: "cancelled", decided.pk: "approved", other.pk: "pending"}
