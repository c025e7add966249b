"""A case's end is settled where the ingester stores it, without a task hop: the batch
that stores the end of a case's run scores the case in its transaction, and once it
commits the evaluation advances in the same process, so the judge's run (or the next
case) is on the runner's queue before any gateway task runs. The runner executes the
case's real task in this process; the ingester stores its events (tests/ingest_helpers).
What cannot advance there (Redis away) is left to a task, never raised to the ingester."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from django.conf import settings
from django.db import transaction

from evaluations import progress
from kionga.redis_client import sync_redis
from runner import worker
from runner.settings import load_settings
from runner.sink import sink_client
from runs.lifecycle import do_finish_runs
from tests.conftest import Api
from tests.evaluations_helpers import (
    calls_only,
    case_of,
    end_run,
    gateway_queue,
    gateway_tasks,
    judged,
    make_evaluated,
    resource_judge,
    start_evaluation,
)
from tests.ingest_helpers import drain
from tests.internal_helpers import closed_port_url
from tests.runs_helpers import RUNNER_TOKEN, queued_tasks

# The in-process runner worker logs each run's end.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.allow_output]
__all__ = ["gateway_queue"]


def run_task_of(rds: redis.Redis, run_id: Any) -> tuple[dict[str, Any], str]:
    [task] = [task for task in queued_tasks(rds) if task[0]["run_id"] == str(run_id)]
    return task


def test_the_ingested_end_of_a_case_starts_its_judge_without_a_gateway_task(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        stream: redis.Redis, gateway_queue: redis.Redis) -> None:
    resource_judge(runner_configured, acme)
    design = make_evaluated(alice, acme, [judged("j1", "hello"), calls_only("c1", "one")])
    evaluation = start_evaluation(api, alice, design)
    progress.advance(str(evaluation.pk))
    gateway_queue.delete("gateway")  # the advance task of the start, done above
    runner = load_settings({"KIONGA_DESIGNER_RUNNER_TOKEN": RUNNER_TOKEN,
                            "REDIS_URL": settings.REDIS_URL, "MLAIOPS_LLM_BACKEND": "mock"})
    sink = sink_client(settings.REDIS_URL)
    try:
        for case_id in ("j1", "c1"):
            payload, signature = run_task_of(rds, case_of(evaluation, case_id).run_id)
            worker.execute(payload, signature, settings=runner, client=sink)
    finally:
        sink.close()

    drain(stream)  # the ingester stores both ends

    judged_case, calls_case = case_of(evaluation, "j1"), case_of(evaluation, "c1")
    assert calls_case.status == "passed", calls_case.reason
    assert calls_case.reason == "Its run completed with every expected call."
    # Scored in the ingester's batch, and the judge's run started once it committed.
    assert judged_case.status == "judging" and judged_case.output == "Answer: hello"
    assert judged_case.judge_run is not None
    judge_payload, _signature = run_task_of(rds, judged_case.judge_run_id)
    assert judge_payload["graph"]["nodes"][1]["config"]["model"] == "judge"
    assert gateway_tasks(gateway_queue) == []  # no settle (nor advance) task on the way
    evaluation.refresh_from_db()
    assert evaluation.status == "running"


@pytest.mark.allow_output  # the refusal is logged on purpose
def test_an_advance_redis_refuses_in_place_is_left_to_a_task(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis, caplog: pytest.LogCaptureFixture) -> None:
    runner_configured.KIONGA_JUDGE_BACKEND = ""
    runner_configured.KIONGA_JUDGE_MODEL = "resource:judge"
    design = make_evaluated(alice, acme, [judged("j1", "hello")])
    evaluation = start_evaluation(api, alice, design)
    progress.advance(str(evaluation.pk))
    gateway_queue.delete("gateway")
    run = case_of(evaluation, "j1").run
    assert run is not None
    end_run(run.pk, output="Answer: hello")
    run.refresh_from_db()
    # The gateway's Redis goes away (the Celery broker stays): the end is stored as the
    # ingester stores it, and nothing is raised out of its transaction.
    redis_url = runner_configured.REDIS_URL
    runner_configured.REDIS_URL = closed_port_url().replace("http://", "redis://") + "/0"
    sync_redis.cache_clear()
    try:
        with transaction.atomic():
            do_finish_runs([run], free_slots=False)
    finally:
        runner_configured.REDIS_URL = redis_url
        sync_redis.cache_clear()

    case = case_of(evaluation, "j1")
    assert case.status == "to_judge" and case.output == "Answer: hello"  # scored in place
    assert case.judge_run is None
    assert gateway_tasks(gateway_queue) == ["evaluations.advance"]
    assert f"Could not advance evaluation {evaluation.pk} here" in caplog.text
