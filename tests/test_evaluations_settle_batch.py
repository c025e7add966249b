"""The ingester settles a batch of case ends at once: scoring six ended cases (their
runs, or their judges' runs) takes as many statements as scoring two, so a wave of
judged cases does not cost the ingester a handful of round trips per case."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from evaluations import progress, scoring
from evaluations.models import Evaluation, EvaluationCase
from tests.conftest import Api
from tests.evaluations_helpers import (
    case_of,
    end_run,
    gateway_queue,
    judged,
    make_evaluated,
    resource_judge,
    start_evaluation,
)

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["gateway_queue"]
VERDICT = '{"scores": {"task_completion": 0.9}, "reason": "It answers."}'


def started_evaluation(api: Api, alice: Any, acme: Any, cases: int) -> Evaluation:
    design = make_evaluated(alice, acme, [judged(f"j{i}", f"q{i}") for i in range(cases)])
    evaluation = start_evaluation(api, alice, design)
    progress.advance(str(evaluation.pk))
    return evaluation


def statements_to_settle(cases: list[EvaluationCase]) -> int:
    """The statements the ingester's transaction makes to score the ended cases (what
    it starts once committed is not counted)."""
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        progress.settle_ended([case.pk for case in cases])
    return len(queries)


def test_a_batch_of_ends_is_scored_in_as_many_statements_as_two(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: Any,
        gateway_queue: Any) -> None:
    runner_configured.KIONGA_DESIGNER_MAX_RUNS = 40  # room for both evaluations' runs
    resource_judge(runner_configured, acme)
    statements: dict[str, list[int]] = {"runs": [], "judges": []}
    for count in (2, 6):
        evaluation = started_evaluation(api, alice, acme, count)
        cases = list(evaluation.cases.select_related("run"))
        for case in cases:
            assert case.run is not None
            end_run(case.run.pk, output=f"Answer: {case.case['input']}")
        statements["runs"].append(statements_to_settle(cases))
        # Scored, and their judges started once the ingester's transaction committed.
        assert {case_of(evaluation, c.case_id).status for c in cases} == {"judging"}
        cases = list(evaluation.cases.select_related("judge_run"))
        for case in cases:
            assert case.judge_run is not None
            end_run(case.judge_run.pk, output=VERDICT,
                    completed=("input", "judge", "output"))
        statements["judges"].append(statements_to_settle(cases))
        assert {case_of(evaluation, c.case_id).status for c in cases} == {"passed"}
        Evaluation.objects.filter(pk=evaluation.pk).update(status="cancelled")

    assert statements["runs"][0] == statements["runs"][1], statements
    assert statements["judges"][0] == statements["judges"][1], statements


def test_a_cases_path_and_calls_come_from_its_own_runs_completions(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: Any,
        gateway_queue: Any) -> None:
    evaluation = started_evaluation(api, alice, acme, 2)
    first, second = list(evaluation.cases.select_related("run").order_by("position"))
    assert first.run is not None and second.run is not None
    end_run(first.run.pk, completed=("input", "answer", "output"))
    end_run(second.run.pk, completed=("input", "output"))
    completions = scoring.completions_of([first.run, second.run])
    assert scoring.run_path(completions[first.run.pk]) == ["input", "answer", "output"]
    assert scoring.run_path(completions[second.run.pk]) == ["input", "output"]
    assert scoring.completed_calls(completions[second.run.pk], ["answer", "input"]) == [
        "input"]
