"""Approvals never outlive their run: however a run ends, its pending requests are
cancelled, and deciding one afterwards is 409 approval_not_pending."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from approvals.actions import NewApproval, do_decide, do_request_approval
from approvals.models import ApprovalRequest
from kionga.errors import APIError
from kionga.models import Project
from runner import protocol
from tests.approvals_helpers import end
from tests.internal_helpers import start_run

NEW = NewApproval(node_id="ask", message="Ship it?", preview="", timeout_seconds=60)
ENDINGS = {
    "completed": {"seq": 5, "type": "run.completed", "at": protocol.now_iso(), "output": "ok",
                  "usage": {"tokens": 0}},
    "failed": protocol.ending_event("run.failed", 5, reason="node_error", code="node_error",
                                    message="boom"),
    "runner_lost": protocol.ending_event("run.failed", 5, reason="runner_lost",
                                         code="runner_lost", message="gone"),
    "cancelled": protocol.ending_event("run.cancelled", 5, reason="cancelled"),
}


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_it_cancels_pending_requests_whatever_ended_the_run(
    ending: str, carol: User, alice: User, acme: Project
) -> None:
    run = start_run(carol, acme)[0]
    pending = do_request_approval(run, NEW)
    bystander = do_request_approval(start_run(carol, acme)[0], NEW)
    end(run, ENDINGS[ending])
    pending.refresh_from_db()
    bystander.refresh_from_db()
    assert (pending.status, bystander.status) == ("cancelled", "pending")
    with pytest.raises(APIError) as caught:
        do_decide(alice, pending, "approve")
    assert (caught.value.status_code, caught.value.code) == (409, "approval_not_pending")
    assert ApprovalRequest.objects.get(pk=pending.pk).decided_by is None
