"""Every end of an approval request says why, in the API and on the approver pages:
expired (with its deadline), cancelled because its run ended (with how the run ended),
approved or rejected (by whom, with the comment). A pending request shows its real
deadline as a time, next to the time left."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from approvals.models import ApprovalRequest
from kionga.models import Project
from runner import protocol
from tests.approvals_helpers import end, pending, waiting_run
from tests.conftest import Api

pytestmark = pytest.mark.django_db

TIMEOUT_MESSAGE = "the run took longer than timeout_seconds (60 s)"
ENDINGS: dict[str, tuple[dict[str, Any], str]] = {
    "timeout": (protocol.ending_event("run.failed", 3, reason="timeout", code="timeout",
                                      message=TIMEOUT_MESSAGE),
                f"The run ended before anyone decided: it failed (timeout: {TIMEOUT_MESSAGE})."),
    "cancelled": (protocol.ending_event("run.cancelled", 3, reason="cancelled"),
                  "The run ended before anyone decided: it was cancelled."),
    "runner_lost": (protocol.ending_event("run.failed", 3, reason="runner_lost",
                                          code="runner_lost", message="The runner is gone."),
                    "The run ended before anyone decided: it failed (runner_lost: The runner "
                    "is gone)."),
}


def signed_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def html(client: Client, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, response.content[:300]
    return response.content.decode()


def api_reason(api: Api, user: User, approval: ApprovalRequest) -> Any:
    answer = api.client_for(user).get(f"/api/v1/agent-approvals/{approval.pk}")
    assert answer.status_code == 200, answer.content
    listed = api.client_for(user).get("/api/v1/agent-approvals").json()["approvals"]
    [entry] = [e for e in listed if e["id"] == str(approval.pk)]
    assert entry["reason"] == answer.json()["reason"]
    return answer.json()["reason"]


@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_a_request_cancelled_by_its_runs_end_says_how_the_run_ended(
        ending: str, api: Api, alice: User, carol: User, acme: Project) -> None:
    event, expected = ENDINGS[ending]
    run = waiting_run(alice, acme)
    approval = pending(run, seconds=120)
    end(run, event)
    approval.refresh_from_db()
    assert (approval.status, approval.reason) == ("cancelled", expected)
    assert api_reason(api, carol, approval) == expected
    client = signed_in(carol)
    assert expected in html(client, f"/approvals/{approval.pk}/")
    assert expected in html(client, "/approvals/?status=cancelled")


def test_an_expired_request_names_its_deadline(api: Api, alice: User, carol: User,
                                               acme: Project) -> None:
    approval = pending(waiting_run(alice, acme))
    deadline = timezone.now() - timedelta(seconds=1)
    ApprovalRequest.objects.filter(pk=approval.pk).update(expires_at=deadline)
    expected = (f"Nobody decided before the deadline ({deadline:%Y-%m-%d %H:%M:%S} UTC); "
                "the step went on down its rejected path.")
    assert api_reason(api, carol, approval) == expected  # reading it expires it
    client = signed_in(carol)
    assert expected in html(client, f"/approvals/{approval.pk}/")
    assert expected in html(client, "/approvals/?status=expired")


@pytest.mark.parametrize(("decision", "comment", "expected"), [
    ("reject", "not this one", "Rejected by carol: not this one"),
    ("reject", "", "Rejected by carol (no comment)."),
    ("approve", "ok", "Approved by carol: ok"),
])
def test_a_decided_request_says_who_decided_and_their_comment(
        api: Api, alice: User, carol: User, acme: Project, decision: str, comment: str,
        expected: str) -> None:
    approval = pending(waiting_run(alice, acme))
    decided = api.client_for(carol).post(f"/api/v1/agent-approvals/{approval.pk}/decision",
                                         {"decision": decision, "comment": comment},
                                         format="json")
    assert decided.status_code == 200, decided.content
    assert decided.json()["reason"] == expected
    assert api_reason(api, alice, approval) == expected
    page = html(signed_in(carol), f"/approvals/{approval.pk}/")
    assert "by carol at" in page and (comment or "No comment.") in page


def test_a_pending_request_shows_its_deadline_and_no_reason(api: Api, alice: User,
                                                            carol: User, acme: Project) -> None:
    approval = pending(waiting_run(alice, acme), seconds=150)
    assert api_reason(api, carol, approval) is None
    client = signed_in(carol)
    detail = html(client, f"/approvals/{approval.pk}/")
    assert f"(until <time datetime=\"{approval.expires_at.isoformat()}\">" \
           f"{approval.expires_at:%Y-%m-%d %H:%M:%S}</time>)" in detail
    # The request's part of the page refreshes while it is pending: its end shows up.
    assert 'id="request-live" data-live-refresh="2"' in detail
    listed = html(client, "/approvals/")
    assert f"(until <time datetime=\"{approval.expires_at.isoformat()}\">" \
           f"{approval.expires_at:%H:%M:%S}</time>)" in listed
