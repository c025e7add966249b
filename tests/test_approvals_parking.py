"""A run's approval request parks its slot; the poll that sees the decision unparks it.

Parked runs are bounded per project and across the runner: beyond, the request is
refused with 429 `parked_run_quota` and the run keeps its slot.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from approvals.models import ApprovalRequest
from kionga.models import Project
from kionga.redis_client import sync_redis
from runner import protocol
from tests.internal_helpers import BASE, run_client, start_run

pytestmark = pytest.mark.urls("kionga.internal_urls")

BODY = {"node_id": "ask", "message": "Send it?", "preview": "40 EUR", "timeout_seconds": 120}


@pytest.fixture(autouse=True)
def clean(rds: Any, acme: Project, evil: Project) -> None:
    rds.delete(*(f"kionga:project:{p.pk}:{kind}" for p in (acme, evil)
                 for kind in ("runs", "parked")))


def create(credential: str) -> Any:
    return run_client(credential).post(BASE + "agent-approvals", BODY)


def parked() -> set[str]:
    members: list[bytes] = sync_redis().zrange(protocol.PARKED_KEY, 0, -1)  # type: ignore[assignment]
    return {m.decode() for m in members}


def test_a_request_parks_the_runs_slot_and_the_decision_gives_it_back(
        carol: User, acme: Project) -> None:
    run, raw = start_run(carol, acme)
    assert protocol.slots_in_use(sync_redis()) == 1
    approval_id = create(raw).json()["id"]
    assert parked() == {str(run.pk)}
    assert protocol.slots_in_use(sync_redis()) == 0
    assert protocol.slot_alive(sync_redis(), str(run.pk))  # the reaper's signal stays
    assert run_client(raw).get(BASE + f"agent-approvals/{approval_id}").json()["status"] == (
        "pending")
    assert parked() == {str(run.pk)}  # still waiting
    ApprovalRequest.objects.filter(pk=approval_id).update(status="approved")
    assert run_client(raw).get(BASE + f"agent-approvals/{approval_id}").json()["status"] == (
        "approved")
    assert parked() == set() and protocol.slots_in_use(sync_redis()) == 1
    assert sync_redis().sismember(f"kionga:project:{acme.pk}:runs", str(run.pk))


def test_a_project_parks_at_most_its_share_of_parked_runs(
        carol: User, acme: Project, settings: Any) -> None:
    settings.KIONGA_PROJECT_MAX_PARKED_RUNS = 1
    first, first_raw = start_run(carol, acme)
    second, second_raw = start_run(carol, acme)
    assert create(first_raw).status_code == 201
    refused = create(second_raw)
    assert refused.status_code == 429, refused.content
    assert refused.json()["error"]["code"] == "parked_run_quota"
    assert refused.json()["error"]["details"] == {"max_parked_runs": 1}
    assert not ApprovalRequest.objects.filter(run=second).exists()
    assert parked() == {str(first.pk)} and protocol.slots_in_use(sync_redis()) == 1


def test_the_runner_parks_at_most_its_parked_runs(
        carol: User, acme: Project, mallory: User, evil: Project, settings: Any) -> None:
    settings.KIONGA_MAX_PARKED_RUNS = 1
    _, ours = start_run(carol, acme)
    _, theirs = start_run(mallory, evil)
    assert create(ours).status_code == 201
    refused = create(theirs)
    assert refused.status_code == 429
    assert refused.json()["error"]["code"] == "parked_run_quota"


def test_a_run_ended_while_parked_leaves_the_parked_runs(carol: User, acme: Project) -> None:
    run, raw = start_run(carol, acme)
    create(raw)
    protocol.release_slot(sync_redis(), str(run.pk))  # the gateway frees an ended run's slot
    assert parked() == set() and not protocol.slot_alive(sync_redis(), str(run.pk))
