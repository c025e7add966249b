"""On the live stack: a run whose approver takes longer than the run's timeout_seconds
goes on once they decide. The wait does not count against the run's clock, and the
run is neither killed by the worker nor reaped as runner_lost meanwhile."""

from __future__ import annotations

import time
from typing import Any

import pytest

from approvals.models import ApprovalRequest
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import gated_graph, wait_for, wait_stored
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)
RUN_TIMEOUT = 2


def test_a_decision_after_the_runs_timeout_still_reaches_the_run(
        stack: Stack, api: Api, alice: Any, carol: Any, acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    approver = Http(stack, api.token_for(carol))
    graph = {**gated_graph("60"), "settings": {"timeout_seconds": RUN_TIMEOUT}}
    design_id = http.create_design(acme.pk, graph)
    run_id = http.start(design_id, input="the refund").json()["id"]
    pending = wait_for(lambda: ApprovalRequest.objects.filter(run_id=run_id).first(),
                       message="no request was created")
    time.sleep(RUN_TIMEOUT + 1.5)  # the approver thinks longer than the run may work
    assert http.run(design_id, run_id)["status"] == "waiting"
    decided = approver.client.post(f"/api/v1/agent-approvals/{pending.pk}/decision",
                                   json={"decision": "approve", "comment": ""})
    assert decided.status_code == 200, decided.text
    run = wait_stored(http, design_id, run_id)
    assert (run["status"], run["output"]) == ("completed", "sent: the refund"), run["error"]
