"""A runner killed mid-run, and a Redis restart: no run stays active, no stored event is lost."""

from typing import Any

import pytest

from runs.models import RunCredential, RunEvent
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import approval_graph, schema_problems, wait_for, wait_stored
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_ends_a_run_whose_runner_was_killed(stack: Stack, api: Api, alice: Any,
                                              acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, approval_graph())
    run_id = http.start(design_id, input="x").json()["id"]
    wait_for(lambda: http.run(design_id, run_id)["status"] == "waiting")
    stack.kill_runner()
    try:
        run = wait_stored(http, design_id, run_id, timeout=30)
    finally:
        stack.restart_runner()
    assert run["status"] == "failed" and run["error"]["code"] == "runner_lost"
    assert run["events"][-1]["reason"] == "runner_lost"
    assert [e["seq"] for e in run["events"]] == list(range(len(run["events"])))
    assert RunCredential.objects.get(run_id=run_id).revoked_at is not None
    assert schema_problems(run["events"]) == []


def test_it_loses_no_stored_event_when_redis_restarts(stack: Stack, api: Api, alice: Any,
                                                      acme: Any) -> None:
    from designs.starter_templates import TEMPLATES

    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, TEMPLATES[0]["graph"])
    before = http.start(design_id, input="before").json()["id"]
    stored = wait_stored(http, design_id, before)["events"]
    stack.restart_redis()
    assert [e.data for e in RunEvent.objects.filter(run_id=before).order_by("seq")] == stored
    after = wait_for(lambda: (r := http.start(design_id, input="after")).status_code == 201 and r,
                     timeout=30)
    run = wait_stored(http, design_id, after.json()["id"], timeout=30)
    assert run["status"] == "completed" and run["output"] == "mock: Answer briefly and " \
        "politely: after"
