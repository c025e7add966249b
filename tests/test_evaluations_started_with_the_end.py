"""The next case starts in the transaction that stores the end of the case before it
(the ingester's batch, through runs_ended): once that batch commits, the next run's
task is on the runner's queue, with no transaction of its own in between. The
project's share still bounds it: the end frees one place, one case starts. An
evaluation another process is advancing is left to it (an advance task), and so are
waiting cases another process holds."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from django.db import connection, connections, transaction

from evaluations import progress
from evaluations.models import Evaluation, EvaluationCase
from runs.dispatch import release_capacity
from runs.lifecycle import do_finish_runs
from tests.conftest import Api
from tests.evaluations_helpers import (
    calls_only,
    case_of,
    end_run,
    gateway_queue,
    gateway_tasks,
    make_evaluated,
    start_evaluation,
)
from tests.runs_helpers import queued_tasks

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["gateway_queue"]


def started_evaluation(api: Api, alice: Any, acme: Any, settings: Any,
                       gateway_queue: redis.Redis, cases: int) -> Evaluation:
    """An evaluation of `cases` calls-only cases in a share of one run: its first case
    running, the others waiting."""
    settings.KIONGA_PROJECT_MAX_RUNS = 1
    design = make_evaluated(alice, acme, [calls_only(f"c{i}", f"case {i}")
                                          for i in range(cases)])
    evaluation = start_evaluation(api, alice, design)
    progress.advance(str(evaluation.pk))
    gateway_queue.delete("gateway")  # the advance task of the start, done above
    return evaluation


def ended_first_case(evaluation: Evaluation) -> Any:
    """The run of the evaluation's first case, ended as the runner ends it."""
    first = case_of(evaluation, "c0").run
    assert first is not None
    end_run(first.pk)
    first.refresh_from_db()
    return first


def statuses(evaluation: Evaluation) -> list[str]:
    return list(evaluation.cases.order_by("position").values_list("status", flat=True))


def test_the_next_case_starts_in_the_transaction_that_stores_the_end(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    evaluation = started_evaluation(api, alice, acme, runner_configured, gateway_queue, 3)
    assert statuses(evaluation) == ["running", "queued", "queued"]
    first = ended_first_case(evaluation)
    rds.delete("runner")  # the first case's task, taken by the runner
    release_capacity(str(first.pk))  # its slot, freed by the runner with its end

    with transaction.atomic():
        do_finish_runs([first], free_slots=False)
        # Still inside the batch's transaction: the next case is started there (one
        # place freed, one case started), its task waits for the commit.
        assert statuses(evaluation) == ["passed", "running", "queued"]
        assert queued_tasks(rds) == []
    [(task, _signature)] = queued_tasks(rds)
    assert task["run_id"] == str(case_of(evaluation, "c1").run_id)
    assert gateway_tasks(gateway_queue) == []


def test_an_evaluation_another_process_advances_is_left_to_a_task(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    evaluation = started_evaluation(api, alice, acme, runner_configured, gateway_queue, 2)
    first = ended_first_case(evaluation)
    # Another connection holds the evaluation's lock while the end is stored.
    other = connections.create_connection("default")
    try:
        other.set_autocommit(False)
        with other.cursor() as cursor:
            cursor.execute("SELECT id FROM evaluations_evaluation WHERE id = %s FOR UPDATE",
                           [evaluation.pk])
            with transaction.atomic():
                do_finish_runs([first], free_slots=False)
        other.rollback()
    finally:
        other.close()
    assert statuses(evaluation) == ["passed", "queued"]
    assert gateway_tasks(gateway_queue) == ["evaluations.advance"]


def test_waiting_cases_another_process_holds_are_left_to_it(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    evaluation = started_evaluation(api, alice, acme, runner_configured, gateway_queue, 2)
    first = ended_first_case(evaluation)
    waiting = EvaluationCase.objects.get(evaluation=evaluation, case_id="c1")
    other = connections.create_connection("default")
    with connection.cursor() as mine:  # a wait for that lock fails instead of hanging
        mine.execute("SET lock_timeout = '2s'")
    try:
        other.set_autocommit(False)
        with other.cursor() as cursor:
            cursor.execute("SELECT id FROM evaluations_evaluationcase WHERE id = %s "
                           "FOR UPDATE", [waiting.pk])
            with transaction.atomic():  # never waits for that lock
                do_finish_runs([first], free_slots=False)
        other.rollback()
    finally:
        other.close()
        with connection.cursor() as mine:
            mine.execute("RESET lock_timeout")
    assert statuses(evaluation) == ["passed", "queued"]
    assert gateway_tasks(gateway_queue) == []
