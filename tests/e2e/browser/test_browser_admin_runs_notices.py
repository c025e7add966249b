"""The admin's runs list follows its projects' notices: a run started elsewhere shows
in the list without a reload, long before its 30-second poll would bring it."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect

from designs.starter_templates import TEMPLATES
from kionga.models import Membership, Role
from tests.conftest import Api
from tests.e2e.browser.conftest import BrowserPage
from tests.e2e.conftest import Http
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_new_run_shows_in_the_list_on_its_notice(stack: Stack, api: Api, alice: User,
                                                   acme: Any, tab: BrowserPage) -> None:
    ops = User.objects.create_superuser("ops", "ops@example.com", "ops-password")
    Membership.objects.create(project=acme, user=ops, role=Role.VIEWER)
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, TEMPLATES[0]["graph"], name="Listed")
    tab.sign_in("ops", "ops-password", "/admin/runs/run/")
    expect(tab.page.locator("html")).to_have_attribute("data-notices", "open")
    run_id = http.start(design_id, input="hello").json()["id"]
    expect(tab.page.locator("#result_list")).to_contain_text(run_id, timeout=5_000)
    tab.screenshot("admin-runs-notice")
    assert tab.console_errors == []
