"""The quality gate from the CLI: `kionga evaluate ID` then `kionga publish ID --evaluation
EVALUATION_ID` publishes, and every refusal's hint leads through the gate: the commands it
names, run as written, publish (they never send you back to the command that failed); an
evaluation without test cases points at where to add them."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from django.urls import reverse

from designs.models import Design
from tests.conftest import Api
from tests.e2e.cli_kit import Kionga, assistant_graph, graph_file
from tests.e2e.conftest import Http
from tests.e2e.helpers import wait_for
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def gated_design(kionga: Kionga, http: Http) -> str:
    """The assistant template with one passing case, whose publishes need an evaluation
    (set on the row: the API's flag is the server's business)."""
    design_id = str(kionga("designs", "create", "--template", "assistant")["data"]["design_id"])
    answer = http.client.put(f"/api/v1/agent-designs/{design_id}/fixtures", json={
        "revision": 0, "cases": [{"name": "answers", "input": "hi",
                                  "expected": {"calls": ["model", "output"]}}]})
    assert answer.status_code == 200, answer.text
    Design.objects.filter(pk=design_id).update(require_evaluation=True)
    return design_id


def follow_hint(kionga: Kionga, hint: str) -> dict[str, Any]:
    """Run the `kionga ...` commands a hint names, in order, as written (EVALUATION_ID:
    the one the previous command printed); the last one's answer."""
    commands = re.findall(r"`kionga ([^`]+)`", hint)
    assert len(commands) == 2, hint
    evaluation = kionga(*shlex.split(commands[0]))["data"]
    assert evaluation["passed"] is True
    return kionga(*shlex.split(commands[1].replace("EVALUATION_ID",
                                                   evaluation["evaluation_id"])))


def test_evaluate_then_publish_with_that_evaluation(stack: Stack, api: Api, alice: Any,
                                                   tmp_path: Path) -> None:
    token = api.token_for(alice)
    kionga = Kionga(stack, token)
    design_id = gated_design(kionga, Http(stack, token))
    evaluation = kionga("evaluate", design_id)["data"]
    assert (evaluation["gate"], evaluation["passed"]) == (True, True)
    published = kionga("publish", design_id, "--evaluation", evaluation["evaluation_id"])
    assert (published["data"]["number"], published["data"]["created"]) == (1, True)
    # The same after a change of behaviour: a new revision, evaluated, then published.
    kionga("designs", "update", design_id, "--revision", "1", "--file",
           graph_file(tmp_path, assistant_graph()))
    evaluation = kionga("evaluate", design_id)["data"]
    assert evaluation["revision"] == 2
    again = kionga("publish", design_id, "--evaluation", evaluation["evaluation_id"])["data"]
    assert (again["number"], again["created"], again["source_revision"]) == (2, True, 2)


def test_a_publish_without_evaluation_hints_the_way_through(stack: Stack, api: Api,
                                                           alice: Any) -> None:
    token = api.token_for(alice)
    kionga = Kionga(stack, token)
    design_id = gated_design(kionga, Http(stack, token))
    refused = kionga("publish", design_id, code=8)
    assert refused["error"]["code"] == "QUALITY_GATE"
    assert "requires a passing evaluation" in refused["error"]["message"]  # the server's
    assert refused["data"] == {"design_id": design_id, "revision": 1, "evaluation_id": None}
    hint = refused["error"]["hint"]
    assert f"kionga evaluate {design_id} --revision 1" in hint
    assert all("--evaluation" in c for c in re.findall(r"`kionga publish[^`]*`", hint))
    published = follow_hint(kionga, hint)["data"]
    assert (published["number"], published["created"]) == (1, True)


def test_an_evaluation_that_cannot_open_the_gate_hints_the_way_through(
        stack: Stack, api: Api, alice: Any) -> None:
    token = api.token_for(alice)
    http = Http(stack, token)
    kionga = Kionga(stack, token)
    design_id = gated_design(kionga, http)
    cases = http.client.get(f"/api/v1/agent-designs/{design_id}/fixtures").json()
    answer = http.client.put(f"/api/v1/agent-designs/{design_id}/fixtures", json={
        "revision": cases["revision"],
        "cases": [*cases["cases"], {"name": "again", "input": "hey"}]})
    assert answer.status_code == 200, answer.text
    first_case = answer.json()["cases"][0]["id"]
    # A subset evaluation (started over the API: the CLI always evaluates every case).
    started = http.client.post(f"/api/v1/agent-designs/{design_id}/evaluations",
                               json={"cases": [first_case]})
    assert started.status_code == 201, started.text
    subset = started.json()["id"]
    wait_for(lambda: http.client.get(f"/api/v1/agent-evaluations/{subset}").json()[
        "status"] == "completed")
    refused = kionga("publish", design_id, "--evaluation", subset, code=8)
    assert "chosen subset" in refused["error"]["message"]
    _, said = kionga.human("publish", design_id, "--evaluation", subset, code=8)
    assert "error QUALITY_GATE: The evaluation cannot open the quality gate" in said
    published = follow_hint(kionga, refused["error"]["hint"])["data"]
    assert (published["number"], published["created"]) == (1, True)


def test_a_revision_the_design_lacks_is_not_taken_for_a_missing_design(
        stack: Stack, api: Api, alice: Any) -> None:
    kionga = Kionga(stack, api.token_for(alice))
    design_id = kionga("designs", "create", "--template", "assistant")["data"]["design_id"]
    for command in (["publish", design_id], ["evaluate", design_id]):
        refused = kionga(*command, "--revision", "9", code=7)["error"]
        assert refused["code"] == "NOT_FOUND", command
        assert refused["message"] == (f"Design {design_id} has no revision 9: its revisions "
                                      "are 1 to 1.")
        assert refused["hint"] == "Leave --revision out for the latest (1)."
    assert kionga("publish", design_id)["data"]["created"] is True


def test_evaluate_without_test_cases_hints_where_to_add_them(stack: Stack, api: Api,
                                                            alice: Any) -> None:
    token = api.token_for(alice)
    kionga = Kionga(stack, token)
    design_id = kionga("designs", "create", "--template", "assistant")["data"]["design_id"]
    refused = kionga("evaluate", design_id, code=2)["error"]
    assert "There is no test case to evaluate" in refused["message"]  # the server's
    canvas = stack.base_url + reverse("designer:design", args=[design_id])
    assert refused["hint"] == (
        f"Add test cases first: on the design's canvas, {canvas} (Test & publish: Suggest "
        f"test cases), or with PUT /api/v1/agent-designs/{design_id}/fixtures; then "
        "evaluate again.")
    answer = Http(stack, token).client.put(f"/api/v1/agent-designs/{design_id}/fixtures", json={
        "revision": 0, "cases": [{"name": "answers", "input": "hi",
                                  "expected": {"calls": ["model", "output"]}}]})
    assert answer.status_code == 200, answer.text
    assert kionga("evaluate", design_id)["data"]["passed"] is True
