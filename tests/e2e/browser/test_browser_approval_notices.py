"""The approver inbox follows its projects' notices: a new request shows without a
reload, long before the slow poll it keeps as a fallback would bring it."""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from tests.conftest import Api
from tests.e2e.browser.conftest import BrowserPage
from tests.e2e.browser.test_browser_approvals import SIGN_IN, waiting_request
from tests.e2e.conftest import Http
from tests.e2e.helpers import gated_graph
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_new_request_shows_at_once_on_its_notice(stack: Stack, api: Api, alice: User,
                                                   carol: User, acme: Any,
                                                   tab: BrowserPage) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, gated_graph("240"), name="Notices")
    tab.sign_in("carol", "carol-password", "/approvals/", login_path=SIGN_IN)
    requests = tab.page.locator("#requests")
    expect(requests).to_contain_text("Nothing is waiting for a decision")
    # The list follows acme's notices; from then on it polls only every 30 s.
    expect(tab.page.locator("html")).to_have_attribute("data-notices", "open")
    approval = waiting_request(http, design_id, "the refund")
    asked = time.monotonic()
    expect(requests.get_by_role("link", name=approval.message)).to_be_visible(timeout=5_000)
    assert time.monotonic() - asked < 5
    tab.screenshot("approvals-list-notice")
    assert tab.console_errors == []
