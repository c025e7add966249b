"""`kionga runs list --design ID`: a design's runs newest first, filtered by --status and
cut by --limit; with --json one envelope (each run as `runs show` has it, plus its
duration), for people a table of id, status, start, duration and error code."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Api
from tests.e2e.cli_kit import Kionga, graph_file
from tests.e2e.conftest import Http
from tests.e2e.helpers import wait_stored
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def counter_graph() -> dict[str, Any]:
    """A tool node: a run started without allow_side_effects fails on it."""
    return {"schema_version": 2, "nodes": [
        {"id": "input", "kind": "input"},
        {"id": "count", "kind": "tool", "config": {"tool": "word_count"}},
        {"id": "output", "kind": "output"}],
        "edges": [{"from": "input", "to": "count"}, {"from": "count", "to": "output"}]}


def test_runs_list_filters_limits_and_shows_each_run(stack: Stack, api: Api, alice: Any,
                                                     tmp_path: Path) -> None:
    token = api.token_for(alice)
    kionga, http = Kionga(stack, token), Http(stack, token)
    design_id = kionga("designs", "create", "--file",
                       graph_file(tmp_path, counter_graph()))["data"]["design_id"]
    done = kionga("run", design_id, "--input", "two words", "--allow-side-effects",
                  "--yes")["data"]["run_id"]
    failed = http.start(design_id, input="refused").json()["id"]
    failure = wait_stored(http, design_id, failed)["error"]["code"]
    listed = kionga("runs", "list", "--design", design_id)["data"]
    assert listed["design_id"] == design_id
    assert [r["run_id"] for r in listed["runs"]] == [failed, done]  # newest first
    assert [r["status"] for r in listed["runs"]] == ["failed", "completed"]
    assert all(r["duration_seconds"] >= 0 for r in listed["runs"])
    assert "events" not in listed["runs"][0]
    only = kionga("runs", "list", "--design", design_id, "--status", "completed")["data"]
    assert [r["run_id"] for r in only["runs"]] == [done]
    newest = kionga("runs", "list", "--design", design_id, "--limit", "1")["data"]
    assert [r["run_id"] for r in newest["runs"]] == [failed]
    assert kionga("runs", "list", "--design", design_id, "--status", "waiting")["data"][
        "runs"] == []
    table, _ = kionga.human("runs", "list", "--design", design_id)
    rows = [line for line in table.splitlines() if failed in line or done in line]
    assert len(rows) == 2
    assert "failed" in rows[0] and failure in rows[0] and "s " in rows[0]
    assert "completed" in rows[1] and rows[1].count("│ - ") == 1  # no error code
    assert kionga.human("runs", "list", "--design", design_id, "--status",
                        "cancelled")[0].startswith("No runs of design")


def test_runs_list_refuses_bad_arguments(stack: Stack, api: Api, alice: Any) -> None:
    kionga = Kionga(stack, api.token_for(alice))
    assert kionga("runs", "list", code=2)["error"]["code"] == "USAGE"  # --design is needed
    design_id = kionga("designs", "create", "--template", "assistant")["data"]["design_id"]
    for bad in (["--limit", "0"], ["--status", "done"]):
        refused = kionga("runs", "list", "--design", design_id, *bad, code=2)
        assert refused["error"]["code"] == "USAGE", bad
    assert kionga("runs", "list", "--design", "0000aaaa", code=7)["error"]["code"] == (
        "DESIGN_NOT_FOUND")
