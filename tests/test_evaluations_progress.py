"""An evaluation's cases run as ordinary runs, are scored when their runs end, and the
evaluation finishes with counts, slices and the judge it used. The runner's side is
written as the ingester stores it (the live runner is in tests/e2e)."""

from __future__ import annotations

from typing import Any

import pytest
import redis

from evaluations import progress
from evaluations.models import Evaluation
from kionga.models import AuditEvent
from runner import protocol
from runs.models import Run
from tests.conftest import Api
from tests.evaluations_helpers import (
    calls_only,
    case_of,
    end_run,
    gateway_queue,
    judged,
    make_evaluated,
    settle_all,
    start_evaluation,
)
from tests.runs_helpers import queued_tasks

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["gateway_queue"]


def test_it_fails_judged_cases_under_the_mock_judge_and_passes_calls_only(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    runner_configured.KIONGA_JUDGE_MODEL = ""
    runner_configured.KIONGA_JUDGE_BACKEND = ""
    runner_configured.MLAIOPS_LLM_BACKEND = "mock"
    design = make_evaluated(alice, acme, [
        judged("j1", "hello"), calls_only("c1", "one"), calls_only("c2", "two")])
    evaluation = start_evaluation(api, alice, design)
    progress.advance(str(evaluation.pk))
    runs = {c.case_id: c.run for c in evaluation.cases.select_related("run") if c.run}
    assert len(runs) == 3 and all(run.design_id == design.pk for run in runs.values())
    assert sorted(t[0]["input"] for t in queued_tasks(rds)) == ["hello", "one", "two"]
    end_run(runs["j1"].pk, output="Answer: hello")
    end_run(runs["c1"].pk, output="Answer: one")
    end_run(runs["c2"].pk, status="failed", completed=("input",),
            error={"code": "node_error", "message": "boom"})
    settle_all(evaluation)

    got = api.client_for(alice).get(f"/api/v1/agent-evaluations/{evaluation.pk}").json()
    cases = {c["case_id"]: c for c in got["cases"]}
    assert cases["j1"]["status"] == "failed"
    assert "mock backend cannot judge" in cases["j1"]["reason"]
    assert cases["j1"]["judge_run_id"] is None and cases["j1"]["output"] == "Answer: hello"
    assert cases["c1"]["passed"] is True and cases["c1"]["tool_accuracy"] == 1.0
    assert cases["c2"]["passed"] is False and cases["c2"]["tool_accuracy"] == 0.0
    assert "its run failed (node_error: boom)" in cases["c2"]["reason"]
    assert "expected calls did not complete: answer, output" in cases["c2"]["reason"]
    assert got["status"] == "completed" and got["passed"] is False
    assert got["progress"] == {"done": 3, "total": 3, "queued": 0, "in_flight": []}
    assert got["counts"] == {"total": 3, "passed": 1, "failed": 2, "cancelled": 0}
    assert got["judge"] == {"backend": "mock", "model": "llm",
                            "rubric_version": "kionga-rubric-1", "chosen_by": "operator",
                            "destination": None}
    assert got["slices"]["calls"]["passed"] == 1 and got["slices"]["judged"]["failed"] == 1
    assert got["tool_accuracy"] == pytest.approx(2 / 3, abs=1e-4)
    assert got["content_sha256"] == evaluation.content_sha256
    actions = list(AuditEvent.objects.filter(target_type="evaluation")
                   .values_list("action", flat=True).order_by("id"))
    assert actions == ["evaluation.started", "evaluation.finished"]
    settle_all(evaluation)  # a redelivered task changes nothing
    assert AuditEvent.objects.filter(action="evaluation.finished").count() == 1


def test_it_judges_completed_cases_with_a_fenced_judge_run(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    runner_configured.KIONGA_JUDGE_MODEL = "resource:judge"
    design = make_evaluated(alice, acme, [judged("j1", "hello", "relevance", "safety")])
    evaluation = start_evaluation(api, alice, design)
    assert (evaluation.judge_backend, evaluation.judge_model) == ("resource", "resource:judge")
    progress.advance(str(evaluation.pk))
    end_run(case_of(evaluation, "j1").run_id, output="Answer: hello")
    settle_all(evaluation)
    case = case_of(evaluation, "j1")
    assert case.status == "judging" and case.judge_run is not None
    judge_run = case.judge_run
    assert judge_run.resources == {"model": ["judge"]} and not judge_run.allow_side_effects
    [payload] = [t[0] for t in queued_tasks(rds) if t[0]["run_id"] == str(judge_run.pk)]
    system = payload["graph"]["nodes"][1]["config"]["system"]
    assert "relevance" in system and "safety" in system and "never instructions" in system
    assert '"answer": "Answer: hello"' in payload["input"]
    end_run(judge_run.pk, output='{"scores": {"relevance": 0.9, "safety": 0.6}, '
                                 '"reason": "Unsafe tone."}', completed=())
    settle_all(evaluation)
    case = case_of(evaluation, "j1")
    assert case.status == "failed" and case.judge_scores == {"relevance": 0.9, "safety": 0.6}
    assert case.reason == "Scores below 0.7: safety 0.6." and case.judge_reason == "Unsafe tone."
    assert Evaluation.objects.get(pk=evaluation.pk).status == "completed"


def test_it_waits_while_the_runner_is_full_then_starts_the_rest(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    runner_configured.KIONGA_DESIGNER_MAX_RUNS = 2
    design = make_evaluated(alice, acme, [calls_only(f"c{i}", f"in {i}") for i in range(3)])
    for other in ("x", "y"):
        protocol.acquire_slot(rds, other, 2)
    evaluation = start_evaluation(api, alice, design)
    progress.advance(str(evaluation.pk))
    assert Run.objects.count() == 0
    assert Evaluation.objects.get(pk=evaluation.pk).status == "queued"
    assert rds.llen("gateway") >= 2  # the start's task, then the retry
    protocol.release_slot(rds, "x", "y")
    progress.advance(str(evaluation.pk))
    # Its project's share of two slots is one: one case at a time.
    assert Run.objects.count() == 1
    for _ in range(3):
        [running] = evaluation.cases.filter(status="running")
        protocol.release_slot(rds, str(running.run_id))
        end_run(running.run_id, output="Answer")
        settle_all(evaluation)
    found = Evaluation.objects.get(pk=evaluation.pk)
    assert (found.status, found.passed, Run.objects.count()) == ("completed", True, 3)


def test_it_cancels_the_remaining_cases(api: Api, alice: Any, acme: Any,
                                        runner_configured: Any, rds: redis.Redis,
                                        gateway_queue: redis.Redis) -> None:
    design = make_evaluated(alice, acme, [calls_only(f"c{i}", f"in {i}") for i in range(6)])
    evaluation = start_evaluation(api, alice, design)
    progress.advance(str(evaluation.pk))
    assert Run.objects.count() == 4  # the project's share of 8 slots
    client = api.client_for(alice)
    url = f"/api/v1/agent-evaluations/{evaluation.pk}/cancel"
    response = client.post(url)
    assert response.status_code == 202 and response.json()["status"] == "cancelled"
    assert {c["status"] for c in response.json()["cases"]} == {"cancelled"}
    assert all(rds.get(protocol.cancel_key(str(r.pk))) for r in Run.objects.all())
    progress.advance(str(evaluation.pk))
    for run in Run.objects.all():
        end_run(run.pk, status="cancelled", completed=())
    settle_all(evaluation)
    assert Run.objects.count() == 4
    assert set(evaluation.cases.values_list("status", flat=True)) == {"cancelled"}
    api.assert_error(client.post(url), 409, "evaluation_not_active")
    finished = AuditEvent.objects.get(action="evaluation.finished")
    assert finished.details["status"] == "cancelled" and finished.actor == alice


def test_it_fails_the_evaluation_when_its_target_cannot_run(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        gateway_queue: redis.Redis) -> None:
    design = make_evaluated(alice, acme, [calls_only("c0", "x"), calls_only("c1", "y")])
    evaluation = start_evaluation(api, alice, design)
    Evaluation.objects.filter(pk=evaluation.pk).update(created_by=None)
    progress.advance(str(evaluation.pk))
    found = Evaluation.objects.get(pk=evaluation.pk)
    assert (found.status, found.passed, Run.objects.count()) == ("failed", False, 0)
    assert found.error == {"code": "invalid_request",
                           "message": "The evaluation's author no longer exists."}
    assert set(found.cases.values_list("reason", flat=True)) == {
        "The evaluation failed: The evaluation's author no longer exists."}
    assert AuditEvent.objects.get(action="evaluation.finished").details["status"] == "failed"
