"""Swagger UI ("try it", /api/docs/swagger/) in headless Chromium on the live stack: its
assets load under the strict CSP, "Authorize" with a bearer token makes "Try it out"
work, and a signed-in person's session writes too (the start script sends the CSRF
token). Screenshots go to tests/artifacts/."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Locator, expect

from kionga.api_tags import TAGS
from tests.conftest import Api
from tests.e2e.browser.conftest import BrowserPage
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)
SWAGGER = "/api/docs/swagger/"


def try_out(tab: BrowserPage, tag: str, operation_id: str, body: str | None = None) -> Locator:
    """Open an operation, send it with "Try it out" and return its live answer's row."""
    operation = tab.page.locator(f"#operations-{tag}-{operation_id}")
    operation.locator(".opblock-summary").click()
    operation.get_by_role("button", name="Try it out").click()
    if body is not None:
        operation.locator("textarea.body-param__text").fill(body)
    operation.get_by_role("button", name="Execute").click()
    return operation.locator(".live-responses-table .response")


def test_a_bearer_token_from_authorize_tries_a_get(stack: Stack, api: Api, bob: User,
                                                   tab: BrowserPage) -> None:
    tab.goto(SWAGGER)
    # Swagger UI renders the whole schema in the browser: seconds on a busy machine.
    expect(tab.page.locator("#operations-tag-designs")).to_be_visible(timeout=30_000)
    projects = next(tag["description"] for tag in TAGS if tag["name"] == "projects")
    expect(tab.page.locator("#operations-tag-projects")).to_contain_text(projects)
    tab.page.get_by_role("button", name="Authorize").first.click()
    bearer = tab.page.locator(".dialog-ux form").filter(has_text="bearerAuth")
    bearer.get_by_label("auth-bearer-value").fill(api.token_for(bob))
    bearer.get_by_role("button", name="Apply credentials").click()
    expect(bearer.get_by_role("button", name="Remove authorization")).to_be_visible()
    bearer.get_by_role("button", name="Close").click()

    answer = try_out(tab, "projects", "me")
    expect(answer.locator(".response-col_status")).to_have_text("200")
    expect(answer).to_contain_text('"username": "bob"')
    tab.screenshot("api-swagger-token")
    assert tab.console_errors == []


def test_a_signed_in_person_writes_with_the_session_and_its_csrf_token(
        stack: Stack, alice: User, tab: BrowserPage) -> None:
    tab.sign_in("alice", "alice-password", "/designer/", login_path="/designer/login/")
    tab.goto(SWAGGER)
    # No token: the session cookie authenticates; Django refuses its POST without the
    # CSRF header (403), which the start script adds.
    answer = try_out(tab, "designs", "validate_graph", body='{"nodes": [], "edges": []}')
    expect(answer.locator(".response-col_status")).to_have_text("200")
    expect(answer).to_contain_text('"runnable": false')
    tab.screenshot("api-swagger-session")
    assert tab.console_errors == []
