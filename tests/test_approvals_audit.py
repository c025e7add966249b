"""The audit log holds each request (who asked, for which run and node), each decision
(who, which, their comment) and each expiry."""

from __future__ import annotations

from django.contrib.auth.models import User

from approvals.actions import NewApproval, do_decide, do_request_approval
from kionga.models import AuditEvent, Project
from tests.internal_helpers import start_run


def test_it_audits_a_request_and_its_decision(carol: User, alice: User,
                                              acme: Project) -> None:
    run, _ = start_run(carol, acme)
    approval = do_request_approval(run, NewApproval("ask", "Refund?", "40 EUR", 60))
    do_decide(alice, approval, "reject", "too much")
    requested = AuditEvent.objects.get(action="approval.requested")
    assert (requested.actor, requested.target_id, requested.details) == (
        carol, str(approval.pk), {"run_id": str(run.pk), "node_id": "ask"})
    decided = AuditEvent.objects.get(action="approval.decided")
    assert (decided.project, decided.actor, decided.target_id) == (acme, alice,
                                                                   str(approval.pk))
    assert decided.details == {"decision": "reject", "comment": "too much",
                               "run_id": str(run.pk)}
