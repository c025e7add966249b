"""The ingester never waits for an evaluation another process is advancing: a case's
end stored while a gateway worker holds its evaluation's lock (starting a batch of its
cases) is scored in place, and the evaluation's next step is left to an advance task,
which waits for the lock and counts again; the ingester goes on storing events."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import redis
from django.db import connections, transaction

from evaluations import progress
from evaluations.models import Evaluation
from runs.lifecycle import do_finish_runs
from tests.conftest import Api
from tests.evaluations_helpers import (
    case_of,
    end_run,
    gateway_queue,
    gateway_tasks,
    judged,
    make_evaluated,
    resource_judge,
    start_evaluation,
)

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["gateway_queue"]
HOLD_SECONDS = 20.0  # far longer than the ingester's part takes


def test_a_case_ended_while_its_evaluation_is_locked_leaves_the_next_step_to_a_task(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    resource_judge(runner_configured, acme)
    design = make_evaluated(alice, acme, [judged("j1", "hello")])
    evaluation = start_evaluation(api, alice, design)
    progress.advance(str(evaluation.pk))
    gateway_queue.delete("gateway")  # the advance task of the start, done above
    run = case_of(evaluation, "j1").run
    assert run is not None
    end_run(run.pk, output="Answer: hello")
    run.refresh_from_db()

    locked, release = threading.Event(), threading.Event()

    def advancing_elsewhere() -> None:  # a gateway worker in the middle of a batch
        try:
            with transaction.atomic():
                Evaluation.objects.select_for_update().get(pk=evaluation.pk)
                locked.set()
                release.wait(HOLD_SECONDS)
        finally:
            connections.close_all()

    holder = threading.Thread(target=advancing_elsewhere)
    holder.start()
    try:
        assert locked.wait(10)
        with transaction.atomic():  # as the ingester stores the run's end
            do_finish_runs([run], free_slots=False)
        # Back while the lock is still held: the ingester did not wait for it.
        assert not release.is_set() and holder.is_alive()
        case = case_of(evaluation, "j1")
        assert case.status == "to_judge" and case.output == "Answer: hello"  # scored
        assert case.judge_run is None
        assert gateway_tasks(gateway_queue) == ["evaluations.advance"]
    finally:
        release.set()
        holder.join()

    progress.advance(str(evaluation.pk))  # the task, once the lock is free
    case = case_of(evaluation, "j1")
    assert case.status == "judging" and case.judge_run is not None
