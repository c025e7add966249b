"""A project-chosen judge is recorded with the host its model resource points at when
the evaluation starts. The project's admins can change that URL while it runs: a case
whose judge answered while the resource pointed at another host fails, saying so,
instead of counting a verdict of a judge nobody recorded
(docs/decisions/staff-gates-need-the-operators-judge.md)."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from evaluations import progress
from evaluations.models import Evaluation, EvaluationCase
from kionga.resource_models import ModelEndpoint
from tests.conftest import Api
from tests.evaluations_helpers import (
    case_of,
    end_run,
    evaluations_url,
    gateway_queue,
    judged,
    make_evaluated,
    settle_all,
)

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["gateway_queue"]

PASSING = '{"scores": {"task_completion": 0.9}, "reason": "Fine."}'


def judged_while(api: Api, alice: Any, acme: Any, repoint_to: str) -> EvaluationCase:
    """One judged case; the judge's resource URL becomes `repoint_to` while it judges."""
    endpoint = ModelEndpoint.objects.create(project=acme, key="judge",
                                            base_url="https://judge-a.acme.test:8443/v1",
                                            model_name="m")
    design = make_evaluated(alice, acme, [judged("j1", "hello")])
    response = api.client_for(alice).post(evaluations_url(design), {}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["judge"]["destination"] == "judge-a.acme.test:8443"
    evaluation = Evaluation.objects.get(pk=response.json()["id"])
    progress.advance(str(evaluation.pk))
    end_run(case_of(evaluation, "j1").run_id, output="Answer: hello")
    settle_all(evaluation)
    assert case_of(evaluation, "j1").status == "judging"
    endpoint.base_url = repoint_to
    endpoint.save()
    end_run(case_of(evaluation, "j1").judge_run_id, output=PASSING, completed=())
    settle_all(evaluation)
    return case_of(evaluation, "j1")


def test_a_case_judged_after_the_judge_was_repointed_fails_saying_so(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    runner_configured.KIONGA_JUDGE_MODEL = "resource:judge"
    case = judged_while(api, alice, acme, "https://attacker.example:8443/v1")
    assert case.status == "failed" and case.judge_scores == {}
    assert case.reason == (
        "The judge's answer does not count: its model resource:judge pointed at "
        "judge-a.acme.test:8443 when the evaluation started and points at "
        "attacker.example:8443 now.")
    evaluation = Evaluation.objects.get(pk=case.evaluation_id)
    assert (evaluation.status, evaluation.passed) == ("completed", False)


def test_a_new_path_on_the_same_host_is_the_same_judge(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    runner_configured.KIONGA_JUDGE_MODEL = "resource:judge"
    case = judged_while(api, alice, acme, "https://JUDGE-A.acme.test:8443/v2")
    assert case.status == "passed", case.reason
