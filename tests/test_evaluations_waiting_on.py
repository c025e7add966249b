"""A running evaluation says what it waits on: the cases in flight, their runs' status and
the nodes those runs are in, and how many cases wait for a runner slot."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from django.utils import timezone

from evaluations import progress
from evaluations.models import Evaluation
from runs.models import Run, RunEvent
from tests.conftest import Api
from tests.evaluations_helpers import (
    calls_only,
    case_of,
    evaluations_url,
    gateway_queue,
    make_evaluated,
)

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["gateway_queue"]


def stored(run: Run, *events: tuple[str, str]) -> None:
    """The run's events as the ingester stores them: (type, node_id), from seq 1."""
    now = timezone.now().isoformat()
    RunEvent.objects.create(run=run, seq=0, type="run.started",
                            data={"seq": 0, "type": "run.started", "at": now})
    for seq, (kind, node_id) in enumerate(events, start=1):
        RunEvent.objects.create(run=run, seq=seq, type=kind,
                                data={"seq": seq, "type": kind, "at": now, "node_id": node_id})
    Run.objects.filter(pk=run.pk).update(status="running")


def test_it_names_the_waiting_cases_and_the_nodes_their_runs_are_in(
        api: Api, alice: Any, bob: Any, acme: Any, runner_configured: Any,
        rds: redis.Redis, gateway_queue: redis.Redis) -> None:
    runner_configured.KIONGA_PROJECT_MAX_RUNS = 1  # one case in flight, the other queued
    design = make_evaluated(alice, acme, [calls_only("first", "one"),
                                          calls_only("second", "two")])
    started = api.client_for(alice).post(evaluations_url(design), {}, format="json")
    assert started.status_code == 201, started.content
    evaluation = Evaluation.objects.get(pk=started.json()["id"])
    progress.advance(str(evaluation.pk))
    run = case_of(evaluation, "first").run
    assert run is not None
    stored(run, ("node.started", "input"), ("node.completed", "input"),
           ("node.started", "answer"))

    got = api.client_for(bob).get(f"/api/v1/agent-evaluations/{evaluation.pk}").json()
    assert got["status"] == "running"
    assert got["progress"] == {
        "done": 0, "total": 2, "queued": 1,
        "in_flight": [{"case_id": "first", "name": "first", "stage": "run",
                       "run_id": str(run.pk), "run_status": "running", "nodes": ["answer"]}]}
    listed = api.client_for(bob).get(evaluations_url(design)).json()["evaluations"]
    assert listed[0]["progress"] == got["progress"]
