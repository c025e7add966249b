"""In headless Chromium on the live stack: an approver's open request page shows the
request's real deadline, and when the run ends (here: cancelled) the page shows the
request's end and why without a reload — but never swaps away a comment being written."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from approvals.models import ApprovalRequest
from tests.conftest import Api
from tests.e2e.browser.conftest import BrowserPage
from tests.e2e.conftest import Http
from tests.e2e.helpers import gated_graph, wait_for
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)
REASON = "The run ended before anyone decided: it was cancelled."


def test_an_open_request_page_shows_its_deadline_and_then_why_it_ended(
        stack: Stack, api: Api, alice: User, carol: User, acme: Any, tab: BrowserPage) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, gated_graph("240"), name="Refunds")
    run_id = http.start(design_id, input="the refund").json()["id"]
    approval: ApprovalRequest = wait_for(lambda: ApprovalRequest.objects.filter(
        run_id=run_id, status="pending").first(), message="the run asked for no approval")

    tab.page.goto(tab.url("/approvals/sign-in/?next=/approvals/"))
    tab.sign_in("carol", "carol-password", "/approvals/", login_path="/approvals/sign-in/")
    tab.goto(f"/approvals/{approval.pk}/")
    expect(tab.page.locator(".deadline")).to_have_text(
        f"(until {approval.expires_at:%Y-%m-%d %H:%M:%S})")
    comment = tab.page.get_by_label("Comment")
    comment.fill("Let me check the amount")
    tab.page.locator("h1").click()  # focus leaves the form; the draft stays

    cancelled = http.client.post(f"/api/v1/agent-designs/{design_id}/runs/{run_id}/cancel")
    assert cancelled.status_code in (200, 202), cancelled.text
    wait_for(lambda: ApprovalRequest.objects.filter(pk=approval.pk, status="cancelled")
             .exists(), message="the request was not cancelled")
    tab.page.wait_for_timeout(4_500)  # two refresh periods: the draft held the swap off
    expect(comment).to_have_value("Let me check the amount")

    comment.fill("")
    tab.page.locator("h1").click()
    expect(tab.page.locator("#end-reason")).to_have_text(f"Cancelled. {REASON}",
                                                         timeout=10_000)
    expect(tab.page.get_by_role("button", name="Approve")).to_have_count(0)
    tab.screenshot("approvals-cancelled-reason")
    assert tab.console_errors == []
