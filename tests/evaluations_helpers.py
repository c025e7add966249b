"""Helpers for the evaluations tests: a design with test cases, and run endings written
as the ingester would store them (in-process tests have no runner)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.contrib.auth.models import User
from django.utils import timezone

from designs.actions import do_create_design
from designs.models import Design
from evaluations import progress
from evaluations.fixtures import check_cases, do_put_fixtures
from evaluations.models import Evaluation, EvaluationCase
from kionga.models import Project
from kionga.redis_client import sync_redis
from kionga.resource_models import ModelEndpoint
from runs.models import Run, RunEvent


def answer_graph() -> dict[str, Any]:
    """input → answer ("Answer: {input}") → output: no model, so any backend runs it."""
    return {
        "schema_version": 2,
        "nodes": [{"id": "input", "kind": "input"},
                  {"id": "answer", "kind": "prompt", "config": {"template": "Answer: {input}"}},
                  {"id": "output", "kind": "output"}],
        "edges": [{"from": "input", "to": "answer"}, {"from": "answer", "to": "output"}],
    }


def judged(name: str, text: str, *criteria: str, min_score: float = 0.7) -> dict[str, Any]:
    return {"id": name, "name": name, "input": text, "tags": ["judged"],
            "expected": {"calls": ["answer"],
                         "judge": {"criteria": list(criteria or ["task_completion"]),
                                   "min_score": min_score}}}


def calls_only(name: str, text: str, *calls: str) -> dict[str, Any]:
    return {"id": name, "name": name, "input": text, "tags": ["calls"],
            "expected": {"calls": list(calls or ["answer", "output"])}}


def make_evaluated(owner: User, project: Project, cases: list[dict[str, Any]],
                   name: str = "Evaluated") -> Design:
    design = do_create_design(owner, project, name, "", answer_graph())
    full = [{"history": [], "tags": [], "expected": {"calls": [], "judge": None}, **c}
            for c in cases]
    for case in full:
        case["expected"] = {"calls": [], "judge": None, **case["expected"]}
    do_put_fixtures(owner, design, 0, check_cases(design, full))
    return design


def evaluations_url(design: Design) -> str:
    return f"/api/v1/agent-designs/{design.pk}/evaluations"


def start_evaluation(api: Any, user: User, design: Design, **body: Any) -> Evaluation:
    """POST an evaluation of `design` as `user` (201, queued); the stored evaluation."""
    response = api.client_for(user).post(evaluations_url(design), body, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["status"] == "queued"
    return Evaluation.objects.get(pk=response.json()["id"])


def resource_judge(settings: Any, project: Project) -> None:
    """The project's model resource `judge` judges (KIONGA_JUDGE_MODEL=resource:judge);
    it points at a closed port: these tests write the judge runs' ends themselves."""
    settings.KIONGA_JUDGE_BACKEND = ""
    settings.KIONGA_JUDGE_MODEL = "resource:judge"
    ModelEndpoint.objects.create(project=project, key="judge", base_url="http://127.0.0.1:9/v1",
                                 model_name="judge", secret="sk-judge-0123456789abcdef")


def end_run(run_id: Any, status: str = "completed", output: str | None = None,
            completed: tuple[str, ...] = ("input", "answer", "output"),
            error: dict[str, str] | None = None) -> None:
    """The run ended as the ingester stores it: its node.completed events and status."""
    for seq, node in enumerate(completed):
        data = {"seq": seq, "type": "node.completed", "node_id": node,
                "at": timezone.now().isoformat()}
        if node != "output":  # an output node fires no port
            data["port"] = "out"
        RunEvent.objects.create(run_id=run_id, seq=seq, type="node.completed", data=data)
    Run.objects.filter(pk=run_id).update(status=status, output=output, error=error,
                                         finished_at=timezone.now())


def settle_all(evaluation: Evaluation) -> None:
    progress.settle(list(evaluation.cases.values_list("pk", flat=True)))


def case_of(evaluation: Evaluation, case_id: str) -> EvaluationCase:
    return evaluation.cases.select_related("run", "judge_run").get(case_id=case_id)


def gateway_tasks(client: redis.Redis) -> list[str]:
    """The names of the tasks waiting on the gateway's queue."""
    return [json.loads(raw)["headers"]["task"]
            for raw in client.lrange("gateway", 0, -1)]  # type: ignore[union-attr]


@pytest.fixture
def gateway_queue() -> Iterator[redis.Redis]:
    """The gateway's task queue, emptied after (no worker consumes it in-process)."""
    client = sync_redis()
    yield client
    client.delete("gateway")
