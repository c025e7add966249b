"""`kionga fixtures list|add|update|delete|suggest`: a design's test cases from the CLI
against the live stack; a past run saved as a case (its input, and its output as the
expected answer), and a case edited from the CLI is what the next evaluation runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Api
from tests.e2e.cli_kit import Kionga
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def test_fixtures_from_the_cli(stack: Stack, api: Api, alice: Any, tmp_path: Path) -> None:
    kionga = Kionga(stack, api.token_for(alice))
    design_id = kionga("designs", "create", "--template", "assistant")["data"]["design_id"]
    assert kionga("fixtures", "list", design_id)["data"] == {
        "design_id": design_id, "revision": 0, "cases": []}
    run = kionga("run", design_id, "--input", "What is 2+2?")["data"]

    saved = kionga("fixtures", "add", design_id[:8], "--name", "From a run", "--from-run",
                   run["run_id"][:8], "--expect-output")["data"]
    assert saved["revision"] == 1
    assert saved["case"]["input"] == "What is 2+2?"
    assert saved["case"]["expected"]["judge"]["reference"] == run["output"]

    case_file = tmp_path / "case.json"
    case_file.write_text(json.dumps({"name": "Greets", "input": "hi",
                                     "expected": {"calls": ["model"]}}))
    added = kionga("fixtures", "add", design_id, "--file", str(case_file), "--tag", "smoke")
    case_id = added["data"]["case_id"]
    assert added["data"]["case"]["tags"] == ["smoke"]

    updated = kionga("fixtures", "update", design_id, case_id, "--input", "hello there",
                     "--call", "output")["data"]
    assert updated["case"]["input"] == "hello there"
    assert updated["case"]["expected"]["calls"] == ["output"]
    assert updated["case"]["tags"] == ["smoke"]  # what was not given is kept

    # --call changes the expected calls and keeps the expected answer.
    kept = kionga("fixtures", "update", design_id, saved["case_id"], "--call", "model")["data"]
    assert kept["case"]["expected"]["calls"] == ["model"]
    assert kept["case"]["expected"]["judge"]["reference"] == run["output"]

    deleted = kionga("fixtures", "delete", design_id, saved["case_id"])["data"]
    assert (deleted["deleted"], deleted["revision"]) == (saved["case_id"], 5)
    listed = kionga("fixtures", "list", design_id)["data"]
    assert [c["id"] for c in listed["cases"]] == [case_id] and listed["revision"] == 5

    # The next evaluation runs the case as edited.
    evaluation = kionga("evaluate", design_id)["data"]
    assert [(c["case_id"], c["input"]) for c in evaluation["cases"]] == [
        (case_id, "hello there")]
    assert evaluation["passed"] is True
    assert evaluation["cases"][0]["path"] == ["input", "prompt", "model", "output"]

    suggested = kionga("fixtures", "suggest", design_id)["data"]
    assert suggested["suggestions"] and suggested["saved"] == []
    saved_all = kionga("fixtures", "suggest", design_id, "--save")["data"]
    assert saved_all["revision"] == 6
    assert len(saved_all["saved"]) == len(saved_all["suggestions"])

    table, _ = kionga.human("fixtures", "list", design_id)
    assert case_id in table


def test_fixtures_refusals(stack: Stack, api: Api, alice: Any, bob: Any) -> None:
    kionga = Kionga(stack, api.token_for(alice))
    design_id = kionga("designs", "create", "--template", "assistant")["data"]["design_id"]
    assert kionga("fixtures", "update", design_id, "case-none", "--name", "x",
                  code=7)["error"]["code"] == "NOT_FOUND"
    assert kionga("fixtures", "delete", design_id, "case-none", code=7)["error"][
        "code"] == "NOT_FOUND"
    assert kionga("fixtures", "add", design_id, "--name", "No input",
                  code=2)["error"]["code"] == "USAGE"
    kionga("fixtures", "add", design_id, "--name", "One", "--input", "hi")
    assert kionga("fixtures", "add", design_id, "--name", "One", "--input", "again",
                  code=2)["error"]["code"] == "USAGE"  # the name is taken
    viewer = Kionga(stack, api.token_for(bob))
    assert viewer("fixtures", "list", design_id)["data"]["revision"] == 1
    assert viewer("fixtures", "add", design_id, "--name", "Two", "--input", "hi",
                  code=8)["error"]["code"] == "FORBIDDEN"
