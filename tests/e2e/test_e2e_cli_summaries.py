"""What `kionga` tells people (no --json) after `designs create`/`update`, `evaluate` and
`publish`: a sentence of what happened and the next command, never the raw JSON; a
publish that made nothing says so first and never claims it published."""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from designs.models import Version
from tests.conftest import Api
from tests.e2e.cli_kit import Kionga, assistant_graph, graph_file
from tests.e2e.conftest import Http
from tests.e2e.helpers import FINAL, wait_for
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def put_cases(http: Http, design_id: str, revision: int, expected: dict[str, Any]) -> None:
    answer = http.client.put(f"/api/v1/agent-designs/{design_id}/fixtures", json={
        "revision": revision, "cases": [{"name": "answers", "input": "hi",
                                         "expected": expected}]})
    assert answer.status_code == 200, answer.text


def test_people_read_what_happened_and_what_to_do_next(stack: Stack, api: Api, alice: Any,
                                                       tmp_path: Path) -> None:
    token = api.token_for(alice)
    kionga, http = Kionga(stack, token), Http(stack, token)
    created, _ = kionga.human("designs", "create", "--template", "assistant")
    design_id = kionga("designs", "list")["data"]["designs"][0]["id"]
    assert created.startswith(f"Created design 'Assistant' ({design_id}): revision 1, "
                              "runnable.")
    saved, _ = kionga.human("designs", "update", design_id, "--revision", "1", "--file",
                            graph_file(tmp_path, assistant_graph()))
    assert saved.startswith(f"Saved design 'Assistant' ({design_id}): revision 2, runnable.")
    put_cases(http, design_id, 0, {"calls": ["model", "output"]})
    evaluated, _ = kionga.human("evaluate", design_id)
    evaluation_id = http.client.get(f"/api/v1/agent-designs/{design_id}/evaluations").json()[
        "evaluations"][0]["id"]
    first, advice = evaluated.splitlines()
    assert first == (f"Evaluation {evaluation_id} passed: 1 of 1 cases (design {design_id}, "
                     "revision 2).")
    assert advice.startswith("Publish revision 2 with it: kionga ")
    published, _ = kionga.human(*shlex.split(advice.split(": kionga ", 1)[1]))  # as advised
    version = Version.objects.get(design_id=design_id)
    assert published.splitlines() == [
        f"Published version 1 (sha256 {version.content_sha256[:12]}…) of design {design_id}, "
        "from revision 2.",
        f"Run it: kionga run {design_id} --version 1"]
    again, _ = kionga.human("publish", design_id)
    # The gateway's own words (publish's `message`), first.
    assert again.splitlines()[0].startswith(
        "Nothing new was published: revision 2 has the same behaviour as version 1 "
        f"(content_sha256 {version.content_sha256[:12]}")
    assert "Published" not in again and Version.objects.count() == 1
    detached, _ = kionga.human("evaluate", design_id, "--detach")
    assert " is queued: 0 of 1 cases done " in detached or " is running: " in detached
    assert "Once it has passed, publish revision 2 with it: kionga publish " in detached
    for text in (created, saved, evaluated, published, again, detached):
        assert "{" not in text, text  # no raw JSON
    # The detached evaluation ends before the test does (its rows are flushed after).
    wait_for(lambda: all(e["status"] in FINAL for e in http.client.get(
        f"/api/v1/agent-designs/{design_id}/evaluations").json()["evaluations"]), timeout=60)


def test_a_failed_evaluation_lists_each_failed_case(stack: Stack, api: Api, alice: Any) -> None:
    token = api.token_for(alice)
    kionga, http = Kionga(stack, token), Http(stack, token)
    design_id = kionga("designs", "create", "--template", "assistant")["data"]["design_id"]
    put_cases(http, design_id, 0, {"judge": {"criteria": ["relevance"]}})  # no working judge
    _, said = kionga.human("evaluate", design_id, code=1)
    lines = said.splitlines()
    assert lines[0] == "error EVALUATION_FAILED: The evaluation did not pass: 1 of 1 cases failed."
    assert lines[1].startswith("hint: Some cases failed")
    assert lines[2].startswith("  ✗ answers: ")
