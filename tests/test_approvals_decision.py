"""Deciding an approval through the public API: editors decide once; others cannot."""

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from approvals.models import ApprovalRequest
from kionga.models import AuditEvent
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import make_design


def _pending(alice: Any, acme: Any, seconds: int = 60) -> ApprovalRequest:
    run = Run.objects.create(project=acme, design=make_design(alice, acme), revision=1,
                             content_sha256="x" * 64, created_by=alice, status="waiting")
    return ApprovalRequest.objects.create(project=acme, run=run, node_id="gate",
                                          message="Send it?",
                                          expires_at=timezone.now() + timedelta(seconds=seconds))


def _url(approval: ApprovalRequest) -> str:
    return f"/api/v1/agent-approvals/{approval.pk}/decision"


def test_it_lets_an_editor_decide_once(api: Api, alice: Any, carol: Any, acme: Any) -> None:
    approval = _pending(alice, acme)
    client = api.client_for(carol)
    response = client.post(_url(approval), {"decision": "reject", "comment": "not now"},
                           format="json")
    assert response.status_code == 200, response.content
    assert (response.json()["status"], response.json()["comment"]) == ("rejected", "not now")
    assert AuditEvent.objects.filter(action="approval.decided").count() == 1
    again = client.post(_url(approval), {"decision": "approve"}, format="json")
    api.assert_error(again, 409, "approval_not_pending")


def test_it_refuses_viewers_and_other_tenants(api: Api, alice: Any, bob: Any, mallory: Any,
                                              acme: Any) -> None:
    approval = _pending(alice, acme)
    api.assert_error(api.client_for(bob).post(_url(approval), {"decision": "approve"},
                                              format="json"), 403, "forbidden")
    api.assert_error(api.client_for(mallory).post(_url(approval), {"decision": "approve"},
                                                  format="json"), 404, "not_found")
    api.assert_error(api.client_for(mallory).get(f"/api/v1/agent-approvals/{approval.pk}"),
                     404, "not_found")
    assert api.client_for(bob).get(f"/api/v1/agent-approvals/{approval.pk}").status_code == 200


def test_it_answers_409_for_an_expired_request(api: Api, alice: Any, acme: Any) -> None:
    approval = _pending(alice, acme, seconds=-1)
    response = api.client_for(alice).post(_url(approval), {"decision": "approve"},
                                          format="json")
    error = api.assert_error(response, 409, "approval_not_pending")
    assert error["details"]["status"] == "expired"


@pytest.mark.parametrize(("body", "field"), [
    ({"decision": ["approve"]}, "decision"), ({"decision": "maybe"}, "decision"),
    ({"decision": "approved"}, "decision"), ({}, "decision"), ([1], "non_field_errors"),
    ({"decision": "approve", "comment": "x" * 2001}, "comment"),
    ({"decision": "approve", "comment": 5}, "comment"),
])
def test_it_checks_the_body(api: Api, alice: Any, acme: Any, body: Any, field: str) -> None:
    approval = _pending(alice, acme)
    response = api.client_for(alice).post(_url(approval), body, format="json")
    error = api.assert_error(response, 400, "invalid_request")
    assert list(error["details"]["fields"]) == [field]
    assert ApprovalRequest.objects.get(pk=approval.pk).status == "pending"


def test_it_keeps_the_comment_as_sent(api: Api, alice: Any, acme: Any) -> None:
    approval = _pending(alice, acme)
    body = {"decision": "approve", "comment": "  fine  "}
    response = api.client_for(alice).post(_url(approval), body, format="json")
    assert response.json()["comment"] == "  fine  "
