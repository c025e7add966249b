"""A run with two approvals pending at once (parallel branches) stays parked until
neither waits: the first decision does not give it its runner slot back while the
second request still waits on a person; the second decision does, and the run completes."""

from typing import Any

import pytest
import redis

from runner import protocol
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import wait_for, wait_stored
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def two_approvals_graph() -> dict[str, Any]:
    """input → (gate-a ‖ gate-b) → join (all) → output: two requests pending at once."""
    gate = {"kind": "approval", "config": {"message": "Send it?", "timeout_seconds": "120"}}
    return {
        "schema_version": 2,
        "nodes": [
            {"id": "input", "kind": "input"},
            {"id": "gate-a", **gate},
            {"id": "gate-b", **gate},
            {"id": "both", "kind": "join", "config": {"require": "all"}},
            {"id": "output", "kind": "output"},
        ],
        "edges": [
            {"from": "input", "to": "gate-a"},
            {"from": "input", "to": "gate-b"},
            {"from": "gate-a", "to": "both", "from_port": "approved"},
            {"from": "gate-b", "to": "both", "from_port": "approved"},
            {"from": "both", "to": "output"},
        ],
        "settings": {"timeout_seconds": 300},
    }


# Where this run is (parked, holding a slot): the stack is shared, and another test's
# runs may still be ending, so its global counts say nothing of this run.
def parked(stack: Stack, run_id: str) -> bool:
    return redis.Redis.from_url(stack.redis_url).zscore(protocol.PARKED_KEY, run_id) is not None


def holds_slot(stack: Stack, run_id: str) -> bool:
    return redis.Redis.from_url(stack.redis_url).zscore(protocol.SLOTS_KEY, run_id) is not None


def completed_nodes(http: Http, design: str, run_id: str) -> set[str]:
    events = http.run(design, run_id)["events"]
    return {str(e.get("node_id")) for e in events if e.get("type") == "node.completed"}


def test_a_run_stays_parked_while_any_of_its_approvals_waits(
        stack: Stack, api: Api, alice: Any, acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design = http.create_design(acme.pk, two_approvals_graph())
    started = http.start(design, input="two people decide")
    assert started.status_code == 201, started.text
    run_id = started.json()["id"]
    pending = wait_for(lambda: (lambda found: found if len(found) == 2 else None)(
        http.client.get("/api/v1/agent-approvals",
                        params={"run_id": run_id, "status": "pending"}).json()["approvals"]),
        message="the two requests were not listed")
    assert wait_for(lambda: parked(stack, run_id), message="the waiting run was not parked")
    assert not holds_slot(stack, run_id)

    first, second = sorted(pending, key=lambda a: a["node_id"])
    decided = http.client.post(f"/api/v1/agent-approvals/{first['id']}/decision",
                               json={"decision": "approve"})
    assert decided.status_code == 200, decided.text
    # The run saw the first decision (its node completed), and still waits on the second.
    wait_for(lambda: first["node_id"] in completed_nodes(http, design, run_id),
             message="the run did not see the first decision")
    assert (parked(stack, run_id), holds_slot(stack, run_id)) == (True, False)

    decided = http.client.post(f"/api/v1/agent-approvals/{second['id']}/decision",
                               json={"decision": "approve"})
    assert decided.status_code == 200, decided.text
    done = wait_stored(http, design, run_id)
    assert done["status"] == "completed", (done["error"], done["events"][-4:])
    assert wait_for(lambda: not parked(stack, run_id) and not holds_slot(stack, run_id))
