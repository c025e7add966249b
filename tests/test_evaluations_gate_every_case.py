"""The quality gate opens for any complete, passing evaluation of the revision's behaviour
that ran every case the design had when it started, whether or not it was started with
`gate`; one of a chosen subset says so with its counts; `gate: true` refuses a subset
(docs/decisions/quality-gate-needs-every-case.md)."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from designs.models import Version
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
    settle_all,
)
from tests.versions_helpers import publish_url

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["gateway_queue"]

TWO_CASES = [calls_only("c0", "x"), calls_only("c1", "y")]


def passed_evaluation(api: Api, user: Any, design: Any, body: dict[str, Any]) -> str:
    """Start an evaluation through the API, let each of its case runs pass, return its ID."""
    started = api.client_for(user).post(evaluations_url(design), body, format="json")
    assert started.status_code == 201, started.content
    evaluation = Evaluation.objects.get(pk=started.json()["id"])
    progress.advance(str(evaluation.pk))
    for case in evaluation.cases.all():
        end_run(case_of(evaluation, case.case_id).run_id, output=f"Answer: {case.case_id}")
    settle_all(evaluation)
    got = api.client_for(user).get(f"/api/v1/agent-evaluations/{evaluation.pk}").json()
    assert (got["status"], got["passed"]) == ("completed", True), got
    return str(evaluation.pk)


@pytest.mark.parametrize("body", [{}, {"gate": False}, {"cases": ["c1", "c0"]}],
                         ids=["nothing", "gate-false", "every-case-named"])
def test_an_evaluation_of_every_case_opens_the_gate_without_gate(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis, body: dict[str, Any]) -> None:
    design = make_evaluated(alice, acme, TWO_CASES)
    evaluation_id = passed_evaluation(api, alice, design, body)
    got = api.client_for(alice).get(f"/api/v1/agent-evaluations/{evaluation_id}").json()
    assert (got["gate"], got["design_cases"], got["all_cases"]) == (False, 2, True)
    response = api.client_for(alice).post(
        publish_url(design), {"revision": 1, "evaluation_id": evaluation_id}, format="json")
    assert response.status_code == 201, response.content
    assert Version.objects.get().artifact["evaluation"]["evaluation_id"] == evaluation_id


def test_a_chosen_subset_cannot_open_the_gate_and_says_so(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    design = make_evaluated(alice, acme, TWO_CASES)
    evaluation_id = passed_evaluation(api, alice, design, {"cases": ["c1"]})
    got = api.client_for(alice).get(f"/api/v1/agent-evaluations/{evaluation_id}").json()
    assert (got["design_cases"], got["all_cases"]) == (2, False)
    response = api.client_for(alice).post(
        publish_url(design), {"revision": 1, "evaluation_id": evaluation_id}, format="json")
    error = api.assert_error(response, 409, "quality_gate")
    assert error["message"] == ("The evaluation cannot open the quality gate: it ran a chosen "
                                "subset of the cases (1 of 2); evaluate every case.")
    assert Version.objects.count() == 0


def test_gate_true_runs_every_case_and_refuses_a_subset(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    design = make_evaluated(alice, acme, TWO_CASES)
    client = api.client_for(alice)
    refused = api.assert_error(
        client.post(evaluations_url(design), {"gate": True, "cases": ["c0"]}, format="json"),
        400, "invalid_request")
    assert refused["message"].endswith("A gate evaluation runs every case: this list names 1 of "
                                  "the design's 2; leave cases out.")
    assert Evaluation.objects.count() == 0
    named = client.post(evaluations_url(design), {"gate": True, "cases": ["c0", "c1"]},
                        format="json")
    assert named.status_code == 201, named.content
    assert (named.json()["gate"], named.json()["all_cases"]) == (True, True)


def test_adding_a_case_later_does_not_make_an_evaluation_a_subset(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    design = make_evaluated(alice, acme, TWO_CASES)
    evaluation_id = passed_evaluation(api, alice, design, {})
    client = api.client_for(alice)
    fixtures = client.get(f"/api/v1/agent-designs/{design.pk}/fixtures").json()
    more = client.put(f"/api/v1/agent-designs/{design.pk}/fixtures",
                      {"revision": fixtures["revision"],
                       "cases": [*fixtures["cases"], calls_only("c2", "z")]}, format="json")
    assert more.status_code == 200, more.content
    response = client.post(publish_url(design), {"revision": 1, "evaluation_id": evaluation_id},
                           format="json")
    assert response.status_code == 201, response.content
