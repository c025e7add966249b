"""The canvas's debugging loop: after a run, click a node and read its whole output, its
tokens and time; re-run from a node, which calls only that node and those after it."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from tests.conftest import Api
from tests.e2e.browser.conftest import BrowserPage
from tests.e2e.browser.test_browser_canvas import (  # noqa: F401 - canvas_built: autouse
    canvas_built,
    node,
    sign_in,
    unexpected_errors,
)
from tests.e2e.conftest import Http
from tests.e2e.replay_kit import counting_model, two_models
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_node_shows_its_records_and_reruns_from_there(
        stack: Stack, api: Api, tab: BrowserPage, alice: Any, acme: Any) -> None:
    with counting_model(acme) as model:
        design_id = Http(stack, api.token_for(alice)).create_design(acme.pk, two_models())
        sign_in(tab, "alice", f"/designer/designs/{design_id}/")
        page = tab.page
        expect(node(page, "m1")).to_be_visible()
        page.get_by_role("tab", name="Run").click()
        page.get_by_label("Run input").fill("hello")
        page.get_by_role("button", name="Run", exact=True).click()
        expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", "completed")
        expect(page.get_by_test_id("run-output")).to_have_text("answer 2: answer 1: Say hello")
        # Tokens and time on the cards.
        expect(node(page, "m1").get_by_test_id("node-usage")).to_contain_text("15 tokens · ")
        expect(node(page, "p").get_by_test_id("node-usage")).to_contain_text("0 tokens")

        # Click a node: its records, its whole output.
        page.get_by_role("tab", name="Inspect").click()
        node(page, "m1").locator(".k-title").click()
        records = page.get_by_test_id("node-records")
        expect(records.get_by_test_id("node-output")).to_have_text("answer 1: Say hello")
        expect(records.get_by_test_id("node-attempt")).to_contain_text("15 tokens · cost 0.02")
        expect(records).to_contain_text("Input from p")
        tab.screenshot("canvas-node-records")

        # Re-run from the second model: one call, the first model's answer repeated.
        node(page, "m2").locator(".k-title").click()
        expect(records.get_by_test_id("node-output")).to_have_text(
            "answer 2: answer 1: Say hello")
        records.get_by_role("button", name="Re-run from here").click()
        expect(page.get_by_test_id("run-output")).to_have_text("answer 3: answer 1: Say hello")
        assert model.calls == 3
        expect(node(page, "m1").get_by_test_id("node-usage")).to_contain_text("reused · 0 tokens")
        page.get_by_role("tab", name="Inspect").click()
        node(page, "m1").locator(".k-title").click()
        expect(records.get_by_test_id("node-attempt")).to_have_attribute("data-status", "reused")
        tab.screenshot("canvas-rerun-from-node")
    assert unexpected_errors(tab) == []
