"""POST agent-approvals and GET agent-approvals/{id} with a run credential."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from approvals.models import ApprovalRequest
from kionga.models import AuditEvent, Membership, Project
from tests.conftest import Api
from tests.internal_helpers import BASE, run_client, start_run

pytestmark = pytest.mark.urls("kionga.internal_urls")

BODY = {"node_id": "ask", "message": "Send the refund?", "preview": "refund 40 EUR",
        "timeout_seconds": 120}


def create(credential: str, **changes: object) -> Any:
    return run_client(credential).post(BASE + "agent-approvals", {**BODY, **changes})


def poll(credential: str, approval_id: str) -> Any:
    return run_client(credential).get(BASE + f"agent-approvals/{approval_id}")


def test_it_creates_a_pending_request_for_the_run(carol: User, acme: Project) -> None:
    run, raw = start_run(carol, acme)
    before = timezone.now()
    response = create(raw)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["status"] == "pending" and body["comment"] is None
    stored = ApprovalRequest.objects.get(pk=body["id"])
    assert (stored.project, stored.run, stored.node_id, stored.message, stored.preview) == (
        acme, run, "ask", "Send the refund?", "refund 40 EUR")
    expires = parse_datetime(body["expires_at"])
    assert expires is not None
    assert before + timedelta(seconds=119) < expires < timezone.now() + timedelta(seconds=121)


def test_it_records_an_audit_event(carol: User, acme: Project) -> None:
    run, raw = start_run(carol, acme)
    approval_id = create(raw).json()["id"]
    event = AuditEvent.objects.get(action="approval.requested")
    assert (event.project, event.actor, event.target_type, event.target_id) == (
        acme, carol, "approval", approval_id)
    assert event.details == {"run_id": str(run.pk), "node_id": "ask"}


def test_it_polls_the_request(carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    approval_id = create(raw).json()["id"]
    response = poll(raw, approval_id)
    assert response.status_code == 200
    assert {k: response.json()[k] for k in ("id", "status", "comment")} == {
        "id": approval_id, "status": "pending", "comment": None}


def test_it_shows_a_decision_with_its_comment(carol: User, alice: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    approval_id = create(raw).json()["id"]
    ApprovalRequest.objects.filter(pk=approval_id).update(status="rejected", comment="too much")
    assert poll(raw, approval_id).json()["status"] == "rejected"
    assert poll(raw, approval_id).json()["comment"] == "too much"


def test_it_expires_a_pending_request_past_its_deadline(carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    approval_id = create(raw, timeout_seconds=10).json()["id"]
    ApprovalRequest.objects.filter(pk=approval_id).update(
        expires_at=timezone.now() - timedelta(seconds=1))
    assert poll(raw, approval_id).json()["status"] == "expired"
    assert ApprovalRequest.objects.get(pk=approval_id).status == "expired"


@pytest.mark.parametrize("changes", [
    {"timeout_seconds": 9}, {"timeout_seconds": 291}, {"timeout_seconds": "60"},
    {"timeout_seconds": True}, {"timeout_seconds": None}, {"node_id": ""}, {"node_id": 3},
    {"message": ""}, {"message": "x" * 2001}, {"preview": "x" * 2001}, {"preview": None},
])
def test_it_rejects_bad_requests(
    api: Api, carol: User, acme: Project, changes: dict[str, object]
) -> None:
    _, raw = start_run(carol, acme)
    error = api.assert_error(create(raw, **changes), 400, "invalid_request")
    assert list(error["details"]["fields"]) == list(changes)
    assert not ApprovalRequest.objects.exists()


@pytest.mark.parametrize("timeout", [10, 290])
def test_it_accepts_the_timeout_bounds(carol: User, acme: Project, timeout: int) -> None:
    _, raw = start_run(carol, acme)
    assert create(raw, timeout_seconds=timeout).status_code == 201


def test_it_hides_another_runs_request(api: Api, carol: User, alice: User, acme: Project) -> None:
    _, mine = start_run(carol, acme)
    _, theirs = start_run(alice, acme)
    approval_id = create(theirs).json()["id"]
    other = api.assert_error(poll(mine, approval_id), 404, "resource_denied")
    missing = api.assert_error(poll(mine, "6a0e1f4e-0000-4000-8000-000000000000"), 404,
                               "resource_denied")
    garbage = api.assert_error(poll(mine, "not-a-uuid"), 404, "resource_denied")
    assert other["message"] == missing["message"] == garbage["message"]


def test_it_checks_the_credential_before_the_id(api: Api, carol: User, acme: Project) -> None:
    # A malformed ID answers like any other request's ID, but only to a run.
    for approval_id in ("not-a-uuid", "6a0e1f4e-0000-4000-8000-000000000000"):
        api.assert_error(poll("krc_not-a-credential", approval_id), 401, "invalid_credential")


def test_it_hides_another_projects_request(
    api: Api, carol: User, mallory: User, acme: Project, evil: Project
) -> None:
    _, mine = start_run(carol, acme)
    _, theirs = start_run(mallory, evil)
    approval_id = create(theirs).json()["id"]
    api.assert_error(poll(mine, approval_id), 404, "resource_denied")


def test_it_denies_creation_once_the_starter_lost_the_grant(
    api: Api, carol: User, acme: Project
) -> None:
    _, raw = start_run(carol, acme)
    Membership.objects.filter(user=carol).delete()
    api.assert_error(create(raw), 403, "resource_denied")
