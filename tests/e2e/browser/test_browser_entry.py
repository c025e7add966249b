"""Finding the way in, in headless Chromium on the live stack: the root's sign-in lands on
the designer, whose top bar leads home, where the links and signing out are; a sign-in
with a `next` lands there. Screenshots go to tests/artifacts/."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.e2e.browser.conftest import BrowserPage

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_person_signs_in_at_the_root_and_finds_the_products_pages(
        alice: User, acme: Any, tab: BrowserPage) -> None:
    page = tab.page
    tab.goto("/")
    tab.screenshot("root-sign-in")
    page.get_by_label("Username").fill("alice")
    page.get_by_label("Password").fill("alice-password")
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(tab.url("/designer/"))

    bar = page.get_by_role("banner")
    nav = bar.get_by_role("navigation", name="Kionga")
    expect(nav.get_by_role("link", name="Approvals")).to_have_attribute("href", "/approvals/")
    expect(nav.get_by_role("link", name="Admin")).to_have_count(0)  # alice is no ops staff
    tab.screenshot("designer-top-bar")
    nav.get_by_role("link", name="Home").click()

    expect(page).to_have_url(tab.url("/"))
    links = page.get_by_role("navigation", name="Kionga").get_by_role("link")
    expect(links).to_have_text(["Designer", "Approvals", "API docs"])
    tab.screenshot("root-signed-in")
    page.get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(tab.url("/"))
    expect(page.get_by_label("Password")).to_be_visible()
    assert tab.console_errors == []


def test_a_sign_in_with_next_lands_there_and_the_approver_ui_leads_back(
        alice: User, acme: Any, tab: BrowserPage) -> None:
    tab.sign_in("alice", "alice-password", "/approvals/", login_path="/designer/login/")
    expect(tab.page).to_have_url(tab.url("/approvals/"))
    nav = tab.page.get_by_role("navigation", name="Kionga")
    expect(nav.get_by_role("link", name="Designer")).to_have_attribute("href", "/designer/")
    tab.screenshot("approvals-top-bar")
    nav.get_by_role("link", name="Home").click()
    expect(tab.page).to_have_url(tab.url("/"))
    expect(tab.page.get_by_text(re.compile("Signed in as"))).to_be_visible()
    assert tab.console_errors == []
