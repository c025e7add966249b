"""Every starter template runs end to end: HTTP start → Celery runner → Redis → SSE and DB."""

from typing import Any

import pytest

from designs.starter_templates import TEMPLATES
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import schema_problems, wait_stored
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)



@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t["id"])
def test_it_runs_each_template(stack: Stack, api: Api, alice: Any, acme: Any,
                               template: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, template["graph"], template["name"])
    started = http.start(design_id, input=template["example_input"])
    assert started.status_code == 201, started.text
    run_id = started.json()["id"]
    frames = http.sse(design_id, run_id)
    stored = [data for kind, data in frames if kind != "delta"]
    assert [e["seq"] for e in stored] == list(range(len(stored)))
    assert stored[0]["type"] == "run.started" and stored[-1]["type"] == "run.completed"
    assert stored[-1]["output"].startswith("mock: ")
    run = wait_stored(http, design_id, run_id)
    assert run["status"] == "completed" and run["output"] == stored[-1]["output"]
    assert run["events"] == stored  # stored exactly once, in order, same as streamed
    assert all(e["type"] != "node.delta" for e in run["events"])
    assert schema_problems(run["events"]) == []
