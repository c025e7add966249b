"""The canvas's revision history: compare two revisions (a cosmetic edit says so, a real
one names the setting), restore the old one as the next revision."""

from __future__ import annotations

import copy
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
from tests.e2e.replay_kit import two_models
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_diffs_two_revisions_and_restores_one(stack: Stack, api: Api, tab: BrowserPage,
                                                  alice: Any, acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    first = copy.deepcopy(two_models())
    for graph_node in first["nodes"]:
        graph_node["config"] = {**graph_node.get("config", {}), **(
            {"model": "llm"} if graph_node["kind"] == "model" else {})}
    design_id = http.create_design(acme.pk, first)
    second = copy.deepcopy(first)
    second["nodes"][1]["config"]["template"] = "Tell me {input}"
    saved = http.client.put(f"/api/v1/agent-designs/{design_id}",
                            json={"revision": 1, "graph": second})
    assert saved.status_code == 200, saved.text
    sign_in(tab, "alice", f"/designer/designs/{design_id}/")
    page = tab.page
    expect(node(page, "p")).to_be_visible()
    page.get_by_role("tab", name="Publish").click()
    page.get_by_role("button", name="Compare revision 1 with the current one").click()
    shown = page.get_by_test_id("revision-diff")
    expect(shown).to_contain_text("behaviour changed")
    expect(shown).to_contain_text("config.template: Say {input} → Tell me {input}")
    tab.screenshot("canvas-revision-diff")
    page.get_by_role("button", name="Restore revision 1").click()
    expect(page.get_by_text("Restored revision 1 as revision 3.")).to_be_visible()
    expect(node(page, "p").locator(".k-title")).to_be_visible()
    page.get_by_role("button", name="Compare revision 1 with the current one").click()
    expect(shown).to_contain_text("same behaviour (a cosmetic edit)")
    assert unexpected_errors(tab) == []
