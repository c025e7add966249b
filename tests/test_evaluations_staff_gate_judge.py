"""Who chose the judge decides which gates an evaluation opens: one judged by the
project's model resource (`KIONGA_JUDGE_MODEL=resource:<ID>`, whose URL and key the
project's admins set) cannot open a gate staff switched on — 409 `quality_gate` saying
why — but opens the project's own gate; one judged by the operator's platform model
opens both. The evaluation records who chose its judge at its start and shows it; the
version's artifact carries it (docs/decisions/staff-gates-need-the-operators-judge.md)."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from designs.models import Design, Version
from evaluations import progress
from evaluations.models import Evaluation
from kionga.resource_models import ModelEndpoint
from runner import protocol
from tests.conftest import Api
from tests.evaluations_helpers import (
    calls_only,
    end_run,
    evaluations_url,
    gateway_queue,
    judged,
    make_evaluated,
    settle_all,
)
from tests.versions_helpers import publish_url

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["gateway_queue"]

PASSING = '{"scores": {"task_completion": 0.9}, "reason": "Does what it asks."}'


def use_judge(settings: Any, model: str) -> None:
    settings.KIONGA_JUDGE_BACKEND = "" if model.startswith("resource:") else "openai"
    settings.KIONGA_JUDGE_MODEL = model


def passed_evaluation(api: Api, user: Any, design: Design, rds: redis.Redis) -> Evaluation:
    """Start an evaluation of every case through the API and let each run (and judge
    run) end as the ingester stores it; it passes."""
    response = api.client_for(user).post(evaluations_url(design), {}, format="json")
    assert response.status_code == 201, response.content
    evaluation = Evaluation.objects.get(pk=response.json()["id"])
    progress.advance(str(evaluation.pk))
    for case in evaluation.cases.all():
        end_run(case.run_id, output="Answer")
        protocol.release_slot(rds, str(case.run_id))
    settle_all(evaluation)
    for case in evaluation.cases.filter(status="judging"):
        end_run(case.judge_run_id, output=PASSING, completed=())
        protocol.release_slot(rds, str(case.judge_run_id))
    settle_all(evaluation)
    evaluation.refresh_from_db()
    assert (evaluation.status, evaluation.passed) == ("completed", True), \
        [(c.case_id, c.reason) for c in evaluation.cases.all()]
    return evaluation


def gated(alice: Any, acme: Any, name: str, *, by_staff: bool,
          cases: list[dict[str, Any]] | None = None) -> Design:
    design = make_evaluated(alice, acme, cases or [judged("j1", "hello")], name=name)
    Design.objects.filter(pk=design.pk).update(require_evaluation=True,
                                               require_evaluation_by_staff=by_staff)
    design.refresh_from_db()
    return design


def publish(api: Api, user: Any, design: Design, evaluation: Evaluation) -> Any:
    return api.client_for(user).post(publish_url(design), {
        "revision": 1, "evaluation_id": str(evaluation.pk)}, format="json")


def test_a_project_chosen_judge_opens_the_projects_gate_but_not_a_staff_gate(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    ModelEndpoint.objects.create(project=acme, key="judge", base_url="https://judge.acme.test/v1",
                                 model_name="m")
    use_judge(runner_configured, "resource:judge")
    staff_gated = gated(alice, acme, "Staff gated", by_staff=True)
    by_project = passed_evaluation(api, alice, staff_gated, rds)
    shown = api.client_for(alice).get(f"/api/v1/agent-evaluations/{by_project.pk}").json()
    assert shown["judge"] == {"backend": "resource", "model": "resource:judge",
                              "rubric_version": "kionga-rubric-1", "chosen_by": "project",
                              "destination": "judge.acme.test"}

    refused = publish(api, alice, staff_gated, by_project)
    message = api.assert_error(refused, 409, "quality_gate")["message"]
    assert ("its cases were judged by resource:judge, a model the project chose, and staff "
            "set this design's gate") in message, message
    assert "did not pass" not in message and "subset" not in message  # that reason only
    assert not Version.objects.filter(design=staff_gated).exists()

    project_gated = gated(alice, acme, "Project gated", by_staff=False)
    opened = publish(api, alice, project_gated, passed_evaluation(api, alice, project_gated, rds))
    assert opened.status_code == 201, opened.content
    judge = Version.objects.get(design=project_gated).artifact["evaluation"]["judge"]
    assert (judge["chosen_by"], judge["model"]) == ("project", "resource:judge")

    # The operator's judge opens the staff gate it could not.
    use_judge(runner_configured, "judge-large")
    by_operator = passed_evaluation(api, alice, staff_gated, rds)
    assert by_operator.judge_chosen_by == "operator"
    published = publish(api, alice, staff_gated, by_operator)
    assert published.status_code == 201, published.content
    judge = Version.objects.get(design=staff_gated).artifact["evaluation"]["judge"]
    assert judge == {"backend": "openai", "model": "judge-large",
                     "rubric_version": "kionga-rubric-1", "chosen_by": "operator",
                     "destination": None}


def test_the_operators_judge_opens_the_projects_gate_too(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    use_judge(runner_configured, "judge-large")
    design = gated(alice, acme, "Project gated", by_staff=False)
    published = publish(api, alice, design, passed_evaluation(api, alice, design, rds))
    assert published.status_code == 201, published.content


def test_a_staff_gate_takes_an_evaluation_no_case_of_which_was_judged(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    # The project's judge was configured, but no case asked it: the verdict is the
    # runs' own (their completed calls).
    use_judge(runner_configured, "resource:judge")
    design = gated(alice, acme, "Calls only", by_staff=True, cases=[calls_only("c1", "one")])
    evaluation = passed_evaluation(api, alice, design, rds)
    assert evaluation.judge_chosen_by == "project"
    published = publish(api, alice, design, evaluation)
    assert published.status_code == 201, published.content
