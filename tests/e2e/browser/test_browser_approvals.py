"""The approver UI in headless Chromium on the live stack (real gateway, runner, ingester):
approve and reject with the mouse, approve with the keyboard alone, a viewer at phone
width, and the admin's run page. Screenshots of each page go to tests/artifacts/."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from approvals.models import ApprovalRequest
from tests.conftest import Api
from tests.e2e.browser.conftest import BrowserPage
from tests.e2e.conftest import Http
from tests.e2e.helpers import gated_graph, wait_for, wait_stored
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)
SIGN_IN = "/approvals/sign-in/"


def waiting_request(http: Http, design_id: str, text: str) -> ApprovalRequest:
    """Start a run of the gated design and return its request once the run asked."""
    run_id = http.start(design_id, input=text).json()["id"]
    found: ApprovalRequest = wait_for(lambda: ApprovalRequest.objects.filter(
        run_id=run_id, status="pending").first(), message="the run asked for no approval")
    return found


def open_request(tab: BrowserPage, approval: ApprovalRequest) -> None:
    tab.page.get_by_role("link", name=approval.message).click()
    expect(tab.page.get_by_role("heading", level=1)).to_have_text(approval.message)


def test_an_editor_approves_and_rejects_and_sees_the_runs_finish(
        stack: Stack, api: Api, alice: User, carol: User, acme: Any, tab: BrowserPage) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, gated_graph("240"), name="Refunds")
    refund = waiting_request(http, design_id, "the refund")

    tab.page.goto(tab.url(f"{SIGN_IN}?next=/approvals/"))
    tab.screenshot("approvals-sign-in")
    tab.sign_in("carol", "carol-password", "/approvals/", login_path=SIGN_IN)
    requests = tab.page.locator("#requests")
    expect(requests.get_by_role("link", name="Send the refund?")).to_be_visible()
    # A new request appears without a reload (the page's script refreshes the list on
    # acme's notice). Once the list follows the notices it polls only every 30 s: a
    # request made before its stream opened would wait for that poll.
    expect(tab.page.locator("html")).to_have_attribute("data-notices", "open")
    loan = waiting_request(http, design_id, "the loan")
    expect(requests.get_by_role("link", name="Send the loan?")).to_be_visible(timeout=10_000)
    clock = requests.locator(".time-left").first
    expect(clock).to_contain_text("min")
    expect(clock).not_to_have_text(clock.inner_text(), timeout=3_000)  # it counts down
    tab.screenshot("approvals-list")

    open_request(tab, refund)
    expect(tab.page.locator("#run")).to_contain_text("approval.requested")
    tab.screenshot("approvals-detail")
    tab.page.get_by_label("Comment").fill("Fine for 40 EUR")
    tab.page.get_by_role("button", name="Approve").click()
    expect(tab.page.get_by_role("status")).to_contain_text("Approved.")
    # The run goes on at once; the page's script brings its end in without a reload.
    expect(tab.page.locator("#run-status")).to_have_text("Completed", timeout=15_000)
    expect(tab.page.locator("#run")).to_contain_text("sent: the refund")
    expect(tab.page.get_by_role("button", name="Approve")).to_have_count(0)
    tab.screenshot("approvals-approved")

    tab.page.get_by_role("link", name="All pending requests").click()
    open_request(tab, loan)
    tab.page.get_by_label("Comment").fill("not this one")
    tab.page.get_by_role("button", name="Reject").click()
    expect(tab.page.locator("#run-status")).to_have_text("Completed", timeout=15_000)
    # The comment went down the rejected port.
    assert wait_stored(http, design_id, str(loan.run_id))["output"] == "held: not this one"

    tab.goto("/approvals/?status=all")
    decided = tab.page.locator("#requests")
    expect(decided).to_contain_text("Approved by carol")
    expect(decided).to_contain_text("Rejected by carol")
    expect(decided).to_contain_text("not this one")
    tab.screenshot("approvals-decided")
    assert tab.console_errors == []


def test_an_approver_decides_with_the_keyboard_alone_and_ops_see_the_timeline(
        stack: Stack, api: Api, alice: User, acme: Any, tab: BrowserPage) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, gated_graph("240"), name="Keyboard")
    approval = waiting_request(http, design_id, "by keys")
    page = tab.page
    keyboard = page.keyboard

    def tab_to(predicate: str, limit: int = 25) -> list[str]:
        """Press Tab until the focused element satisfies the JS predicate (on `el`)."""
        seen: list[str] = []
        for _ in range(limit):
            keyboard.press("Tab")
            seen.append(page.evaluate("document.activeElement.outerHTML.slice(0, 60)"))
            if page.evaluate(f"(el => {predicate})(document.activeElement)"):
                return seen
        raise AssertionError(f"never focused {predicate}: {seen}")

    page.goto(tab.url(f"{SIGN_IN}?next=/approvals/"))
    # The user name field takes focus by itself (autofocus), a moment after the load.
    expect(page.locator("#id_username")).to_be_focused()
    keyboard.type("alice")
    keyboard.press("Tab")
    keyboard.type("alice-password")
    keyboard.press("Enter")
    expect(page).to_have_url(tab.url("/approvals/"))  # on failure: names the URL it is at
    first = tab_to("true")
    assert "Skip to main content" in first[0]  # the first stop skips the header
    tab_to(f"el.getAttribute('href') === '/approvals/{approval.pk}/'")
    keyboard.press("Enter")
    page.wait_for_url(tab.url(f"/approvals/{approval.pk}/"))
    tab_to("el.id === 'comment'")
    keyboard.type("Checked by keyboard")
    keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Approve"
    # Focus is visible where it is.
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") != "none"
    tab.screenshot("approvals-keyboard-focus")
    keyboard.press("Enter")
    expect(page.get_by_role("status")).to_contain_text("Approved.")
    run = wait_stored(http, design_id, str(approval.run_id))
    assert run["output"] == "sent: by keys"
    approval.refresh_from_db()
    assert (approval.status, approval.comment) == ("approved", "Checked by keyboard")

    # Ops staff: the admin's run page shows the run's event timeline.
    User.objects.create_superuser("ops", "ops@example.com", "ops-password")
    page.context.clear_cookies()
    tab.sign_in("ops", "ops-password", f"/admin/runs/run/{approval.run_id}/change/")
    timeline = page.locator(".field-timeline")
    expect(timeline).to_contain_text("approval.resolved")
    expect(timeline).to_contain_text("run.completed")
    tab.screenshot("admin-run-timeline")
    assert tab.console_errors == []


def test_a_viewer_follows_requests_on_a_phone_without_decision_buttons(
        stack: Stack, api: Api, alice: User, bob: User, acme: Any,
        phone_tab: BrowserPage) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, gated_graph("240"), name="Phone")
    approval = waiting_request(http, design_id, "a long refund to a supplier abroad")
    phone_tab.sign_in("bob", "bob-password", "/approvals/", login_path=SIGN_IN)
    page = phone_tab.page
    fits = "document.documentElement.scrollWidth <= window.innerWidth"
    expect(page.get_by_role("link", name=approval.message)).to_be_visible()
    expect(page.get_by_text("View only")).to_be_visible()
    assert page.evaluate(fits), "the list scrolls sideways at phone width"
    phone_tab.screenshot("approvals-phone-list")
    open_request(phone_tab, approval)
    expect(page.get_by_text("only editors and admins decide")).to_be_visible()
    expect(page.get_by_role("button", name="Approve")).to_have_count(0)
    expect(page.get_by_role("textbox", name="Comment")).to_have_count(0)
    assert page.evaluate(fits), "the request page scrolls sideways at phone width"
    phone_tab.screenshot("approvals-phone-detail")
    # A request nobody may see (unknown here, or another project's) is a page, not a crash.
    missing = phone_tab.url(f"/approvals/{uuid.uuid4()}/")
    response = page.goto(missing)
    assert response is not None and response.status == 404
    expect(page.get_by_role("heading", level=1)).to_have_text("Not found")
    phone_tab.screenshot("approvals-phone-not-found")
    # The only errors: that 404 (as the kit notes it, and as the console says it).
    assert [e for e in phone_tab.console_errors if "404" not in e] == []
    assert f"404 {missing}" in phone_tab.console_errors
