"""Test cases in the canvas: a run saved as a test case ("Save as test case", its output
the expected answer), the case edited in the Publish tab, and the next evaluation runs
the edited case and shows its output and path next to what it expected."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from designs.starter_templates import TEMPLATES
from evaluations.models import Fixtures
from runs.models import Run
from tests.conftest import Api
from tests.e2e.browser.conftest import BrowserPage
from tests.e2e.browser.test_browser_canvas import (  # noqa: F401 - canvas_built: autouse
    canvas_built,
    sign_in,
    unexpected_errors,
)
from tests.e2e.conftest import Http
from tests.e2e.helpers import wait_stored
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def test_save_a_run_as_a_case_edit_it_and_evaluate(
        stack: Stack, api: Api, tab: BrowserPage, alice: Any, acme: Any) -> None:
    graph = next(t for t in TEMPLATES if t["id"] == "assistant")["graph"]
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, graph)
    sign_in(tab, "alice", f"/designer/designs/{design_id}/")
    page = tab.page
    page.get_by_role("tab", name="Run").click()
    page.get_by_label("Run input").fill("first question")
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.get_by_test_id("run-status")).to_have_attribute("data-status", "completed")
    output = page.get_by_test_id("run-output").inner_text()
    # The canvas shows the end from the live stream; a case takes the run's output from
    # the store, which the ingester writes a moment later (under load, seconds later:
    # "The run has no output (it is running)" then).
    wait_stored(http, design_id, str(Run.objects.get(design_id=design_id).pk))

    saver = page.get_by_test_id("save-as-case")
    saver.get_by_label("Case name").fill("Saved from a run")
    saver.get_by_role("button", name="Save as test case").click()
    expect(saver.get_by_role("status")).to_contain_text('Saved as test case "Saved from a run"')
    stored = Fixtures.objects.get(design_id=design_id).cases
    assert [(c["input"], c["expected"]["judge"]["reference"]) for c in stored] == [
        ("first question", output)]

    page.get_by_role("tab", name="Publish").click()
    case = page.get_by_test_id("case")
    expect(case.get_by_test_id("case-input")).to_have_text("input: first question")
    case.get_by_role("button", name="Edit").click()
    case.get_by_label("Input").fill("edited question")
    case.get_by_label("Expected calls").fill("model")
    case.get_by_label("task_completion").uncheck()  # no judge: the mock model's run passes
    case.get_by_role("button", name="Save case").click()
    expect(case.get_by_test_id("case-input")).to_have_text("input: edited question")
    assert Fixtures.objects.get(design_id=design_id).cases[0]["input"] == "edited question"
    tab.screenshot("canvas-test-cases")

    page.get_by_role("button", name="Evaluate revision 1").click()
    evaluation = page.get_by_test_id("evaluation")
    expect(evaluation).to_have_attribute("data-verdict", "passed", timeout=30_000)
    result = page.get_by_test_id("case-result")
    expect(result).to_have_attribute("data-status", "passed")
    expect(result.get_by_test_id("case-output")).to_contain_text("edited question")
    expect(result).to_contain_text("calls: model")
    tab.screenshot("canvas-case-results")
    assert unexpected_errors(tab) == []
