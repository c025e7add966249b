"""An evaluation whose settle or advance task was lost still finishes: the beat's sweep
scores cases whose runs ended and starts the cases that wait with nothing in flight."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from evaluations import progress
from evaluations.models import Evaluation
from tests.conftest import Api
from tests.evaluations_helpers import (
    calls_only,
    case_of,
    end_run,
    evaluations_url,
    gateway_queue,
    make_evaluated,
)

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["gateway_queue"]


def test_lost_tasks_are_picked_up_by_the_sweep(api: Api, alice: Any, acme: Any,
                                               runner_configured: Any,
                                               gateway_queue: redis.Redis) -> None:
    design = make_evaluated(alice, acme, [calls_only("c1", "one"), calls_only("c2", "two")])
    response = api.client_for(alice).post(evaluations_url(design), {}, format="json")
    assert response.status_code == 201, response.content
    evaluation = Evaluation.objects.get(pk=response.json()["id"])

    # The advance task enqueued at start was lost: nothing started yet.
    assert progress.sweep() == 1
    runs = {c: case_of(evaluation, c).run for c in ("c1", "c2")}
    assert all(run is not None for run in runs.values())
    assert progress.sweep() == 0  # both in flight: nothing to advance

    # Both runs ended, but the settle tasks from runs_ended were lost.
    for run in runs.values():
        assert run is not None
        end_run(run.pk, output="Answer")
    progress.sweep()
    evaluation.refresh_from_db()
    assert (evaluation.status, evaluation.passed) == ("completed", True)
    assert {case_of(evaluation, c).status for c in ("c1", "c2")} == {"passed"}
    assert progress.sweep() == 0  # an ended evaluation is left alone
