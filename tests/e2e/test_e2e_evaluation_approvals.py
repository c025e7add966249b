"""On the live stack: an evaluation of a graph with an approval node never reaches
people. Each case's run resolves the approval as the case says ("approve" by default,
"reject", or per node), no approval request is created, and the run's events say how
the node resolved (node.completed with its port and reason, run-event.v1)."""

from __future__ import annotations

from typing import Any

import pytest

from approvals.models import ApprovalRequest
from tests.approvals_helpers import gated_graph
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import schema_problems, wait_for
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def case(case_id: str, calls: list[str], **extra: Any) -> dict[str, Any]:
    return {"id": case_id, "name": case_id, "input": "the refund",
            "expected": {"calls": ["input", "gate", *calls, "output"]}, **extra}


def test_an_evaluation_resolves_approvals_as_each_case_says_and_asks_nobody(
        stack: Stack, api: Api, alice: Any, acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, gated_graph("60"), "Gated")
    put = http.client.put(f"/api/v1/agent-designs/{design_id}/fixtures", json={
        "revision": 0, "cases": [case("by-default", ["sent"]),
                                 case("all-rejected", ["held"], approvals="reject"),
                                 case("gate-rejected", ["held"], approvals={"gate": "reject"})]})
    assert put.status_code == 200, put.text
    started = http.client.post(f"/api/v1/agent-designs/{design_id}/evaluations", json={})
    assert started.status_code == 201, started.text
    url = f"/api/v1/agent-evaluations/{started.json()['id']}"
    result = wait_for(lambda: (got := http.client.get(url).json())["status"] not in (
        "queued", "running") and got, timeout=60, message="the evaluation did not end")

    assert (result["status"], result["passed"]) == ("completed", True), result["cases"]
    cases = {c["case_id"]: c for c in result["cases"]}
    assert {k: c["output"] for k, c in cases.items()} == {
        "by-default": "sent: the refund", "all-rejected": "held: ", "gate-rejected": "held: "}
    run_ids = [c["run_id"] for c in cases.values()]
    assert not ApprovalRequest.objects.filter(run_id__in=run_ids).exists()
    for case_id, port in (("by-default", "approved"), ("all-rejected", "rejected"),
                          ("gate-rejected", "rejected")):
        events = http.run(design_id, cases[case_id]["run_id"])["events"]
        assert schema_problems(events) == []
        assert not [e for e in events if e["type"].startswith("approval.")]
        [gate] = [e for e in events if e["type"] == "node.completed"
                  and e["node_id"] == "gate"]
        assert (gate["port"], gate["reason"]) == (port, port)
