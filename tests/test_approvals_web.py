"""The approver web UI (/approvals/), in process: roles, tenants, CSRF, the no-JS flow,
decided and expired requests, and answers that are pages (never a 500)."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from approvals.models import ApprovalRequest
from kionga.models import AuditEvent, Project
from runs.models import RunEvent
from tests.approvals_helpers import pending, waiting_run
from tests.sign_in_helpers import SHARED, clean_addresses  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


def signed_in(user: User) -> Client:
    """A browser-like client: it sends the CSRF token only when a form carries it."""
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    return client


def page(client: Client, path: str, status: int = 200) -> str:
    response = client.get(path)
    assert response.status_code == status, response.content[:500]
    assert response["Content-Type"].startswith("text/html")
    return response.content.decode()


def csrf_token(html: str) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
    assert found, "the page has no CSRF token"
    return found.group(1)


def decide(client: Client, approval: ApprovalRequest, decision: str, comment: str = "",
           ) -> tuple[int, str]:
    """Post the detail page's form as a browser would (its CSRF token); follow the redirect."""
    path = f"/approvals/{approval.pk}/"
    token = csrf_token(page(client, path))
    response = client.post(f"{path}decision", {"csrfmiddlewaretoken": token,
                                                "decision": decision, "comment": comment})
    if response.status_code != 302:
        return response.status_code, response.content.decode()
    assert response["Location"] == path
    return 302, page(client, path)


@pytest.fixture
def request_of_acme(alice: User, acme: Project) -> ApprovalRequest:
    run = waiting_run(alice, acme)
    RunEvent.objects.create(run=run, seq=0, type="run.started",
                            data={"type": "run.started", "seq": 0,
                                  "at": "2026-01-01T00:00:00+00:00"})
    RunEvent.objects.create(run=run, seq=1, type="approval.requested",
                            data={"type": "approval.requested", "seq": 1, "node_id": "gate",
                                  "at": "2026-01-01T00:00:01.500000+00:00",
                                  "preview": "refund 40 EUR"})
    return pending(run, seconds=150)


def test_it_sends_people_who_are_not_signed_in_to_sign_in(request_of_acme: ApprovalRequest
                                                          ) -> None:
    for path in ("/approvals/", f"/approvals/{request_of_acme.pk}/"):
        response = Client().get(path)
        assert response.status_code == 302
        assert response["Location"] == f"/approvals/sign-in/?next={path}"


@pytest.mark.allow_output  # Django logs the refused CSRF check
def test_people_who_are_not_ops_staff_sign_in_with_a_csrf_protected_form(
        carol: User, caplog: pytest.LogCaptureFixture) -> None:
    client = Client(enforce_csrf_checks=True)
    credentials = {"username": "carol", "password": "carol-password"}
    # The admin's login refuses whoever is not staff: that is why the UI has its own.
    admin_form = client.get("/admin/login/").content.decode()
    refused = client.post("/admin/login/", {**credentials,
                                            "csrfmiddlewaretoken": csrf_token(admin_form)})
    assert refused.status_code == 200 and "_auth_user_id" not in client.session
    assert client.post("/approvals/sign-in/", credentials).status_code == 403  # no token
    assert "CSRF token missing" in caplog.text
    form = page(client, "/approvals/sign-in/?next=/approvals/")
    assert '<label for="id_username">Username</label>' in form
    signed = client.post("/approvals/sign-in/?next=/approvals/",
                         {**credentials, "next": "/approvals/",
                          "csrfmiddlewaretoken": csrf_token(form)})
    assert signed.status_code == 302 and signed["Location"] == "/approvals/"
    assert "Signed in as <strong>carol</strong>" in page(client, "/approvals/")


@pytest.mark.allow_output  # django-axes logs failures and the lockout
@pytest.mark.usefixtures("clean_addresses")
def test_sign_in_failures_lock_the_user_name_as_the_admin_does(carol: User,
                                                               settings: Any) -> None:
    def sign_in(password: str) -> int:
        return Client().post("/approvals/sign-in/", {"username": "carol", "password": password},
                             REMOTE_ADDR=SHARED).status_code

    limit = settings.AXES_FAILURE_LIMIT = 2  # the count is the admin's test's business
    assert [sign_in("wrong") for _ in range(limit)] == [200] * (limit - 1) + [429]
    assert sign_in("carol-password") == 429


def test_an_editor_lists_the_pending_requests_of_their_projects(
        carol: User, request_of_acme: ApprovalRequest, mallory: User, evil: Project) -> None:
    theirs = pending(waiting_run(mallory, evil))
    ApprovalRequest.objects.filter(pk=theirs.pk).update(message="Wire the evil funds?")
    client = signed_in(carol)
    html = page(client, "/approvals/")
    assert "no-store" in client.get("/approvals/")["Cache-Control"]  # one person's page
    assert f'href="/approvals/{request_of_acme.pk}/"' in html
    assert "Send it?" in html and "refund 40 EUR" in html  # message and data (redacted)
    assert request_of_acme.run is not None and request_of_acme.run.design is not None
    assert request_of_acme.run.design.name in html and "Acme" in html
    assert re.search(r'data-expires-at="[^"]+">[12] min \d\d s left<', html)
    assert "View only" not in html
    assert "evil" not in html.lower() and str(theirs.pk) not in html
    # Only our own scripts (the CSP forbids inline ones): the live parts are optional.
    assert re.findall(r"<script[^>]*>", html) == [
        '<script src="/static/approvals/approvals.js" defer>']


@pytest.mark.allow_output  # Django logs the refused CSRF check
def test_an_editor_approves_without_javascript_and_the_run_can_read_it(
        carol: User, request_of_acme: ApprovalRequest, caplog: pytest.LogCaptureFixture
) -> None:
    client = signed_in(carol)
    detail = page(client, f"/approvals/{request_of_acme.pk}/")
    assert 'value="approve"' in detail and 'value="reject"' in detail
    assert "approval.requested" in detail and "+1.500 s" in detail  # the run's events
    # CSRF: a POST without the form's token changes nothing.
    forged = client.post(f"/approvals/{request_of_acme.pk}/decision", {"decision": "approve"})
    assert forged.status_code == 403
    assert "CSRF token missing" in caplog.text
    status, after = decide(client, request_of_acme, "approve", "ok for 40 EUR")
    assert status == 302 and "Approved. The run has been told" in after
    request_of_acme.refresh_from_db()
    assert (request_of_acme.status, request_of_acme.comment) == ("approved", "ok for 40 EUR")
    assert request_of_acme.decided_by == carol
    assert 'value="approve"' not in after and "ok for 40 EUR" in after
    assert AuditEvent.objects.filter(action="approval.decided", actor=carol).count() == 1
    # A second decision is a message on the page, not an error.
    status, again = decide_stale(client, request_of_acme)
    assert status == 302 and "carol already approved this request" in again


def decide_stale(client: Client, approval: ApprovalRequest) -> tuple[int, str]:
    """A decision posted from a page loaded before someone else decided."""
    token = csrf_token(page(client, "/approvals/"))
    response = client.post(f"/approvals/{approval.pk}/decision",
                           {"csrfmiddlewaretoken": token, "decision": "reject"})
    assert response.status_code == 302
    return 302, page(client, response["Location"])


def test_a_rejection_keeps_its_comment_and_stays_browsable(
        alice: User, request_of_acme: ApprovalRequest) -> None:
    client = signed_in(alice)
    decide(client, request_of_acme, "reject", "not this one")
    assert page(client, "/approvals/").count('class="request"') == 0
    rejected = page(client, "/approvals/?status=rejected")
    assert "Rejected by alice" in rejected and "not this one" in rejected
    assert "Rejected by alice" in page(client, "/approvals/?status=all")


def test_a_viewer_sees_requests_but_cannot_decide(bob: User,
                                                  request_of_acme: ApprovalRequest) -> None:
    client = signed_in(bob)
    assert "View only" in page(client, "/approvals/")
    detail = page(client, f"/approvals/{request_of_acme.pk}/")
    assert "<textarea" not in detail and 'value="approve"' not in detail
    assert "You are a <strong>viewer</strong>" in detail
    response = client.post(f"/approvals/{request_of_acme.pk}/decision",
                           {"csrfmiddlewaretoken": csrf_token(detail), "decision": "approve"})
    assert response.status_code == 403
    assert "You cannot do this" in response.content.decode()
    request_of_acme.refresh_from_db()
    assert request_of_acme.status == "pending"


def test_another_projects_request_is_not_found(mallory: User, charlie: User,
                                               request_of_acme: ApprovalRequest) -> None:
    for user in (mallory, charlie):
        client = signed_in(user)
        detail = f"/approvals/{request_of_acme.pk}/"
        assert "Not found" in page(client, detail, status=404)
        token = csrf_token(page(client, "/approvals/"))
        response = client.post(f"{detail}decision",
                               {"csrfmiddlewaretoken": token, "decision": "approve"})
        assert response.status_code == 404
    assert "not a member of any project" in page(signed_in(charlie), "/approvals/")
    request_of_acme.refresh_from_db()
    assert request_of_acme.status == "pending"


def test_an_expired_request_is_browsable_and_cannot_be_decided(
        carol: User, request_of_acme: ApprovalRequest) -> None:
    ApprovalRequest.objects.filter(pk=request_of_acme.pk).update(
        expires_at=timezone.now() - timedelta(seconds=1))
    client = signed_in(carol)
    assert 'class="request"' not in page(client, "/approvals/")
    assert "Send it?" in page(client, "/approvals/?status=expired")
    detail = page(client, f"/approvals/{request_of_acme.pk}/")
    assert "Nobody decided before the deadline" in detail and "<textarea" not in detail
    status, after = decide_stale(client, request_of_acme)
    assert "Nothing changed: this request is expired. Nobody decided before" in after


def test_bad_input_is_a_page_with_the_reason(carol: User,
                                             request_of_acme: ApprovalRequest) -> None:
    client = signed_in(carol)
    status, html = decide(client, request_of_acme, "maybe")
    assert status == 400 and "Decision: Select a valid choice" in html
    status, html = decide(client, request_of_acme, "approve", "x" * 2001)
    assert status == 400 and "Comment: Ensure this value has at most 2000" in html
    status, html = decide(client, request_of_acme, "approve", "nul \x00 byte")
    assert status == 400 and "Null characters are not allowed" in html
    assert "That request is not valid" in page(client, "/approvals/?status=bogus", status=400)
    assert "That request is not valid" in page(client, "/approvals/?before=nope", status=400)
    request_of_acme.refresh_from_db()
    assert request_of_acme.status == "pending"


def test_time_left_reads_as_people_say_it() -> None:
    from approvals.web_views import time_left

    now = timezone.now()
    assert [time_left(now + timedelta(seconds=s), now) for s in (3725, 125, 9, 0, -5)] == [
        "1 h 02 min left", "2 min 05 s left", "9 s left", "time is up", "time is up"]
