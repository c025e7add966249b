"""An invitation by email end to end, on the live stack (real gateway, the gateway's
Celery worker, Django's console email backend) in headless Chromium: alice invites an
address nobody has through the API; the worker writes the email, with its one-time
link, to its log; the person opens the link, chooses a password and lands on the
designer, a member of acme; the same link then refuses a second use. Screenshots:
tests/artifacts/invitation-*.png."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, expect

from kionga.models import Membership, Project
from kionga.tokens import issue_token
from tests.e2e.browser.conftest import BrowserPage
from tests.e2e.conftest import Http
from tests.e2e.helpers import wait_for
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def emailed_link(stack: Stack, invitation_id: str) -> str:
    """The path of the invitation's link in the email the worker wrote to its log."""
    log = stack.log_dir / "worker.log"
    pattern = re.compile(rf"https?://\S+?(/welcome/{invitation_id}/\S+)")
    found = wait_for(lambda: pattern.search(log.read_text(errors="replace")),
                     timeout=30, message="the worker wrote no invitation email")
    return str(found.group(1))


def test_an_invited_address_joins_through_the_emailed_link(
        stack: Stack, browser: Browser, tab: BrowserPage, alice: User,
        acme: Project) -> None:
    http = Http(stack, issue_token(alice, "e2e"))
    answer = http.client.post(f"/api/v1/projects/{acme.pk}/members",
                              json={"user": "wendy@example.com", "role": "editor"})
    assert answer.status_code == 202, answer.text
    path = emailed_link(stack, answer.json()["id"])

    page = tab.page
    tab.goto(path)
    expect(page.get_by_text("invited you to")).to_be_visible()
    page.get_by_label("New password", exact=True).fill("Wendy-Joins-2931")
    page.get_by_label("New password again").fill("Wendy-Joins-2931")
    tab.screenshot("invitation-set-password")
    page.get_by_role("button", name="Set password and join").click()
    expect(page).to_have_url(tab.url("/designer/"))
    expect(page.get_by_text("Signed in as wendy@example.com")).to_be_visible()
    tab.screenshot("invitation-designer")
    wendy = User.objects.get(email="wendy@example.com")
    assert wendy.is_active and Membership.objects.get(user=wendy, project=acme).role == "editor"

    again = browser.new_context()  # another browser, no session: the link is spent
    second = again.new_page()
    response = second.goto(tab.url(path))
    assert response is not None and response.status == 404
    expect(second.get_by_text("used already")).to_be_visible()
    again.close()
