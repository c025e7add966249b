"""Cancelling a run that waits on an approval: run.cancelled is the last event."""

from typing import Any

import pytest

from approvals.models import ApprovalRequest
from runs.models import RunCredential
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import approval_graph, schema_problems, wait_stored
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_cancels_a_waiting_run(stack: Stack, api: Api, alice: Any, acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, approval_graph())
    run_id = http.start(design_id, input="please").json()["id"]
    cancelled: list[int] = []

    def cancel(kind: str, data: dict[str, Any]) -> None:
        if kind == "approval.requested":
            response = http.client.post(f"/api/v1/agent-designs/{design_id}/runs/{run_id}/cancel")
            cancelled.append(response.status_code)

    frames = http.sse(design_id, run_id, on_event=cancel)
    assert cancelled == [202]
    assert frames[-1][0] == "run.cancelled"
    run = wait_stored(http, design_id, run_id)
    assert run["status"] == "cancelled" and run["events"][-1]["type"] == "run.cancelled"
    assert ApprovalRequest.objects.get(run_id=run_id).status == "cancelled"
    assert RunCredential.objects.get(run_id=run_id).revoked_at is not None
    assert schema_problems(run["events"]) == []
