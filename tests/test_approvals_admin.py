"""Admin pages for approval requests: a read-only list for ops staff."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client

from approvals.actions import NewApproval, do_request_approval
from kionga.models import Project
from tests.internal_helpers import start_run


def test_it_lists_approval_requests(carol: User, acme: Project, staff: Client) -> None:
    run, _ = start_run(carol, acme)
    do_request_approval(run, NewApproval("ask-node", "Refund?", "", 60))
    response = staff.get("/admin/approvals/approvalrequest/")
    assert response.status_code == 200
    assert b"ask-node" in response.content


def test_it_shows_a_request_read_only(carol: User, acme: Project, staff: Client) -> None:
    run, _ = start_run(carol, acme)
    approval = do_request_approval(run, NewApproval("ask-node", "Refund?", "", 60))
    page = staff.get(f"/admin/approvals/approvalrequest/{approval.pk}/change/")
    assert page.status_code == 200 and b"Refund?" in page.content
    assert b'name="_save"' not in page.content
    assert staff.get("/admin/approvals/approvalrequest/add/").status_code == 403
    deleted = staff.post(f"/admin/approvals/approvalrequest/{approval.pk}/delete/",
                          {"post": "yes"})
    assert deleted.status_code == 403
