"""A project member names a design with escape sequences (a forged link, a screen clear,
a right-to-left override) and rich markup, and runs it on such an input: a viewer's
`kionga` shows the name and the run's output as written, with nothing a terminal would
obey, while `--json` keeps both exactly as stored."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest

from tests.conftest import Api
from tests.e2e.cli_kit import Kionga, assistant_graph
from tests.e2e.conftest import Http
from tests.e2e.helpers import FINAL, wait_for
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)

HOSTILE = ("\x1b]8;;https://evil.example/\x07Invoice\x1b]8;;\x07 \x1b[2J\u202e[red]exe.pdf"
           "[/red] :smile:")
AS_SHOWN = "Invoice [red]exe.pdf[/red] :smile:"


def obeyed(text: str) -> list[str]:
    return [c for c in text if (unicodedata.category(c) == "Cc" and c not in "\n\t")
            or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"]


def column(table: str, index: int) -> str:
    """The text of a table's column, its data rows' cells joined (as they fold)."""
    rows = [line.split("│")[1:-1] for line in table.splitlines() if line.startswith("│")]
    return "".join(cells[index] for cells in rows)


def test_a_viewer_sees_names_and_outputs_as_written(stack: Stack, api: Api, alice: Any,
                                                    bob: Any, acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, assistant_graph(), name=HOSTILE)
    started = http.start(design_id, input=HOSTILE)
    assert started.status_code == 201, started.text
    run_id = started.json()["id"]
    wait_for(lambda: http.client.get(f"/api/v1/agent-designs/{design_id}/runs/{run_id}")
             .json()["status"] in FINAL)
    viewer = Kionga(stack, api.token_for(bob))

    listed, _ = viewer.human("designs", "list")
    shown, _ = viewer.human("runs", "show", run_id, "--design", design_id)
    assert obeyed(listed) == [] and obeyed(shown) == []
    assert "".join(column(listed, 1).split()) == "".join(AS_SHOWN.split())  # folded
    assert shown.splitlines() == [f"run {run_id}: completed", f"mock: {AS_SHOWN}"]

    assert viewer("designs", "list")["data"]["designs"][0]["name"] == HOSTILE
    assert viewer("runs", "show", run_id, "--design", design_id)["data"]["output"] == (
        f"mock: {HOSTILE}")
