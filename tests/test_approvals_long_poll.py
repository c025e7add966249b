"""GET agent-approvals/{id}?wait=: a pending request's answer waits for its decision."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.utils import timezone

from approvals import waiting
from approvals.models import ApprovalRequest
from kionga.models import Project
from tests.internal_helpers import BASE, run_client, start_run

pytestmark = [pytest.mark.urls("kionga.internal_urls"), pytest.mark.django_db(transaction=True)]

BODY = {"node_id": "ask", "message": "Send it?", "preview": "40 EUR", "timeout_seconds": 120}


def new_request(user: User, project: Project) -> tuple[str, str]:
    _, raw = start_run(user, project)
    return raw, run_client(raw).post(BASE + "agent-approvals", BODY).json()["id"]


def decide_later(approval_id: str, seconds: float, by: User) -> threading.Thread:
    def decide() -> None:
        time.sleep(seconds)
        ApprovalRequest.objects.filter(pk=approval_id).update(status="approved", decided_by=by)
        connection.close()

    thread = threading.Thread(target=decide)
    thread.start()
    return thread


def test_the_answer_comes_with_the_decision(carol: User, acme: Project) -> None:
    raw, approval_id = new_request(carol, acme)
    thread = decide_later(approval_id, 0.5, carol)
    began = time.monotonic()
    answer = run_client(raw).get(BASE + f"agent-approvals/{approval_id}", {"wait": "10"})
    took = time.monotonic() - began
    thread.join()
    assert answer.status_code == 200 and answer.json()["status"] == "approved"
    assert 0.5 <= took < 0.5 + 4 * waiting.WATCH_SECONDS


def test_a_pending_request_is_answered_after_the_wait(carol: User, acme: Project) -> None:
    raw, approval_id = new_request(carol, acme)
    began = time.monotonic()
    answer = run_client(raw).get(BASE + f"agent-approvals/{approval_id}", {"wait": "0.6"})
    assert answer.json()["status"] == "pending"
    assert 0.6 <= time.monotonic() - began < 2


def test_the_wait_ends_at_the_requests_deadline(carol: User, acme: Project) -> None:
    raw, approval_id = new_request(carol, acme)
    ApprovalRequest.objects.filter(pk=approval_id).update(
        expires_at=timezone.now() + timedelta(seconds=1))
    began = time.monotonic()
    answer = run_client(raw).get(BASE + f"agent-approvals/{approval_id}", {"wait": "20"})
    assert answer.json()["status"] == "expired"
    assert time.monotonic() - began < 3


@pytest.mark.parametrize("wait", ["-1", "26", "nan", "inf", "soon"])
def test_a_wait_out_of_range_is_refused(carol: User, acme: Project, wait: str) -> None:
    raw, approval_id = new_request(carol, acme)
    answer = run_client(raw).get(BASE + f"agent-approvals/{approval_id}", {"wait": wait})
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_request"


def test_another_runs_request_is_still_a_404(carol: User, acme: Project) -> None:
    _, approval_id = new_request(carol, acme)
    _, other = start_run(carol, acme)
    answer = run_client(other).get(BASE + f"agent-approvals/{approval_id}", {"wait": "5"})
    assert answer.status_code == 404
