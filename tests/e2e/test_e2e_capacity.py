"""Runs waiting on a person hold no runner slot: a project whose runs all wait on
approvals still starts runs; the waiting ones resume after the decision and complete,
and can be cancelled while they wait. Parked runs are bounded per project (half the
runner's parked runs by default): beyond, the approval request is refused."""

import time
from typing import Any

import pytest
import redis

from runner import protocol
from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import approval_graph, wait_for, wait_stored
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def waiting_runs(http: Http, design_id: str, count: int) -> list[str]:
    runs = [http.start(design_id, input=f"run {i}") for i in range(count)]
    assert [r.status_code for r in runs] == [201] * count, [r.text for r in runs]
    ids = [r.json()["id"] for r in runs]
    wait_for(lambda: all(http.run(design_id, i)["status"] == "waiting" for i in ids),
             message="runs did not reach their approvals")
    return ids


def parked(stack: Stack) -> int:
    return int(redis.Redis.from_url(stack.redis_url).zcard(protocol.PARKED_KEY))


def decide_all(http: Http, run_ids: list[str]) -> None:
    for run_id in run_ids:
        listed = wait_for(lambda run_id=run_id: http.client.get(  # type: ignore[misc]
            "/api/v1/agent-approvals", params={"run_id": run_id, "status": "pending"}
        ).json()["approvals"], message="the request was not listed")
        decided = http.client.post(f"/api/v1/agent-approvals/{listed[0]['id']}/decision",
                                   json={"decision": "approve"})
        assert decided.status_code == 200, decided.text


def test_runs_waiting_on_people_hold_no_share(stack: Stack, api: Api, alice: Any,
                                              acme: Any) -> None:
    share = stack.max_runs // 2
    ours = Http(stack, api.token_for(alice))
    design = ours.create_design(acme.pk, approval_graph())
    ids = waiting_runs(ours, design, share)
    wait_for(lambda: parked(stack) == share, message="the waiting runs were not parked")
    assert protocol.slots_in_use(redis.Redis.from_url(stack.redis_url)) == 0
    # The project at its share, every run waiting: it still starts runs (its share of
    # parked runs is full too: this one's request is refused and it fails).
    beyond = ours.start(design, input="beyond the parked share")
    assert beyond.status_code == 201, beyond.text
    failed = wait_stored(ours, design, beyond.json()["id"])
    assert failed["status"] == "failed", failed
    assert "runs waiting on approvals" in failed["error"]["message"]
    # The parked runs resume after the decision and complete.
    decide_all(ours, ids)
    for run_id in ids:
        done = wait_stored(ours, design, run_id)
        assert done["status"] == "completed", (done["error"], done["events"][-4:])
    assert wait_for(lambda: parked(stack) == 0)
    assert wait_for(lambda: protocol.slots_in_use(redis.Redis.from_url(stack.redis_url)) == 0)


def test_a_parked_run_can_be_cancelled(stack: Stack, api: Api, alice: Any, acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design = http.create_design(acme.pk, approval_graph())
    [run_id] = waiting_runs(http, design, 1)
    wait_for(lambda: parked(stack) == 1, message="the waiting run was not parked")
    began = time.monotonic()
    response = http.client.post(f"/api/v1/agent-designs/{design}/runs/{run_id}/cancel")
    assert response.status_code == 202
    assert wait_stored(http, design, run_id)["status"] == "cancelled"
    assert time.monotonic() - began < 5
    assert wait_for(lambda: parked(stack) == 0, message="the cancelled run stayed parked")
