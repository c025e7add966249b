"""An evaluation's wave of cases reaches the runner batch by batch: each batch of
progress.START_BATCH cases starts in a transaction of its own, so its runs' tasks are on
the runner's queue before the next batch starts, not after the whole wave (up to the
project's share) is written; a batch that starts every case still waiting is the
advance's last step."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluations import progress
from evaluations.models import Evaluation, EvaluationCase
from tests.conftest import Api
from tests.evaluations_helpers import (
    calls_only,
    evaluations_url,
    gateway_queue,
    make_evaluated,
    start_evaluation,
)
from tests.runs_helpers import queued_tasks

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["gateway_queue"]


def test_each_batch_is_on_the_runners_queue_before_the_next_starts(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(progress, "START_BATCH", 2)
    design = make_evaluated(alice, acme, [calls_only(f"c{i}", f"case {i}") for i in range(4)])
    started = api.client_for(alice).post(evaluations_url(design), {}, format="json")
    assert started.status_code == 201, started.content
    evaluation = Evaluation.objects.get(pk=started.json()["id"])
    queued_before_each: list[int] = []
    start_case = progress._start_case

    def observed(evaluation: Evaluation, case: EvaluationCase) -> None:
        queued_before_each.append(len(queued_tasks(rds)))
        start_case(evaluation, case)

    monkeypatch.setattr(progress, "_start_case", observed)
    progress.advance(str(evaluation.pk))

    assert queued_before_each == [0, 0, 2, 2]
    assert sorted(task["input"] for task, _ in queued_tasks(rds)) == [
        f"case {i}" for i in range(4)]
    evaluation.refresh_from_db()
    assert evaluation.status == "running"
    assert set(evaluation.cases.values_list("status", flat=True)) == {"running"}


def test_a_batch_that_starts_every_waiting_case_is_the_advances_last_step(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    design = make_evaluated(alice, acme, [calls_only(f"c{i}", f"case {i}") for i in range(3)])
    evaluation = start_evaluation(api, alice, design)
    with CaptureQueriesContext(connection) as queries:
        progress.advance(str(evaluation.pk))
    locks = [q["sql"] for q in queries if q["sql"].startswith('SELECT "evaluations_evaluation"')
             and "FOR UPDATE" in q["sql"]]
    assert len(locks) == 1  # no second step only to find nothing left to start
    assert set(evaluation.cases.values_list("status", flat=True)) == {"running"}
