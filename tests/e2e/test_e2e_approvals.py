"""Approvals with the real runner: an unattended request expires on time and its run
goes down the rejected port; a decision reaches the run within a second."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils.dateparse import parse_datetime

from approvals.models import ApprovalRequest
from kionga.models import AuditEvent
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import gated_graph, schema_problems, wait_for, wait_stored
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def _at(event: dict[str, Any]) -> Any:
    return parse_datetime(event["at"])


def _one(run: dict[str, Any], kind: str) -> dict[str, Any]:
    [found] = [e for e in run["events"] if e["type"] == kind]
    return found


def test_it_expires_an_unattended_request_on_time(stack: Stack, api: Api, alice: Any,
                                                  acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, gated_graph("10"))
    run_id = http.start(design_id, input="the refund").json()["id"]
    # Nobody reads the request: no list, no GET, no decision.
    run = wait_stored(http, design_id, run_id, timeout=40.0)
    approval = ApprovalRequest.objects.get(run_id=run_id)
    assert approval.status == "expired"
    resolved = _one(run, "approval.resolved")
    assert (resolved["port"], resolved["reason"]) == ("rejected", "expired")
    assert run["status"] == "completed" and run["output"] == "held: expired"
    # On time: not before the deadline, and within the runner's grace after it.
    assert approval.expires_at <= _at(resolved) < approval.expires_at + timedelta(seconds=5)
    assert AuditEvent.objects.filter(action="approval.expired",
                                     target_id=str(approval.pk)).count() == 1
    assert schema_problems(run["events"]) == []


@pytest.mark.parametrize(("decision", "port", "output"), [
    ("approve", "approved", "sent: the refund"),
    ("reject", "rejected", "held: not this one"),
])
def test_it_brings_a_decision_to_the_run(stack: Stack, api: Api, alice: Any, carol: Any,
                                         acme: Any, decision: str, port: str,
                                         output: str) -> None:
    http = Http(stack, api.token_for(alice))
    approver = Http(stack, api.token_for(carol))
    design_id = http.create_design(acme.pk, gated_graph("120"))
    run_id = http.start(design_id, input="the refund").json()["id"]
    listed = wait_for(lambda: approver.client.get(
        "/api/v1/agent-approvals", params={"run_id": run_id, "status": "pending"}
    ).json()["approvals"], message="the request was not listed")
    assert listed[0]["message"] == "Send the refund?"
    decided = approver.client.post(f"/api/v1/agent-approvals/{listed[0]['id']}/decision",
                                   json={"decision": decision, "comment": "not this one"})
    assert decided.status_code == 200, decided.text
    run = wait_stored(http, design_id, run_id)
    resolved = _one(run, "approval.resolved")
    assert (resolved["port"], run["output"]) == (port, output)
    decided_at = parse_datetime(decided.json()["decided_at"])
    assert decided_at is not None
    # The runner polls every 0.5 s: the decision is in the run within a second.
    assert _at(resolved) - decided_at < timedelta(seconds=1)
