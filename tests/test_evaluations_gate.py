"""The quality gate: a publish that needs an evaluation names each condition it fails;
a passing gate evaluation of the same behaviour (cosmetic edits included) publishes
with its summary in the artifact."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from designs.models import Version
from designs.validation import revision_report
from evaluations.models import Evaluation, EvaluationCase
from tests.conftest import Api
from tests.evaluations_helpers import answer_graph, calls_only, make_evaluated
from tests.versions_helpers import publish_url


def evaluation(design: Any, *, status: str = "completed", passed: bool | None = True,
               sha: str | None = None, design_cases: int | None = 1) -> Evaluation:
    sha = sha or revision_report(design.current(), design.project).content_sha256 or ""
    found = Evaluation.objects.create(
        project=design.project, design=design, revision=1, content_sha256=sha,
        design_cases=design_cases,
        status=status, passed=passed, judge_backend="openai", judge_model="judge",
        rubric_version="kionga-rubric-1", created_by=design.created_by,
        finished_at=timezone.now() if status == "completed" else None)
    EvaluationCase.objects.create(
        evaluation=found, position=0, case_id="c0", name="c0", case=calls_only("c0", "x"),
        status="passed" if passed else "failed", tool_accuracy=1.0 if passed else 0.5,
        judge_scores={"relevance": 0.9})
    return found


def refusal(api: Api, user: Any, design: Any, body: dict[str, Any]) -> str:
    response = api.client_for(user).post(publish_url(design), body, format="json")
    return str(api.assert_error(response, 409, "quality_gate")["message"])


def test_it_names_each_refusal(api: Api, alice: Any, acme: Any) -> None:
    design = make_evaluated(alice, acme, [calls_only("c0", "x")])
    other = make_evaluated(alice, acme, [calls_only("c0", "x")], name="Other")
    design.require_evaluation = True
    design.save()
    assert "send evaluation_id" in refusal(api, alice, design, {"revision": 1})
    for body_id in ("e-1", str(evaluation(other).pk)):
        assert "does not exist" in refusal(api, alice, design, {"revision": 1,
                                                                "evaluation_id": body_id})
    cases = {
        "it is not complete (it is running)": evaluation(design, status="running",
                                                         passed=None),
        "it did not pass (0 of 1 cases passed)": evaluation(design, passed=False),
        "another behaviour hash": evaluation(design, sha="0" * 64),
        "it ran a chosen subset of the cases (1 of 2); evaluate every case":
            evaluation(design, design_cases=2),
        "it may have run a chosen subset of the cases (1; how many the design had when it "
        "started is not recorded)": evaluation(design, design_cases=None),
    }
    for words, found in cases.items():
        message = refusal(api, alice, design, {"revision": 1, "evaluation_id": str(found.pk)})
        assert words in message, message
        others = [w for w in cases if w != words]
        assert not any(other[:20] in message for other in others), message  # that one only
    both = evaluation(design, passed=False, sha="1" * 64)
    message = refusal(api, alice, design, {"revision": 1, "evaluation_id": str(both.pk)})
    assert "did not pass" in message and "another behaviour hash" in message
    assert Version.objects.count() == 0


def test_it_publishes_with_a_passing_evaluation_after_a_cosmetic_edit(
        api: Api, alice: Any, acme: Any) -> None:
    design = make_evaluated(alice, acme, [calls_only("c0", "x")])
    passing = evaluation(design)
    graph = answer_graph()
    for i, node in enumerate(graph["nodes"]):
        node["name"], node["x"], node["y"] = f"N{i}", 10 * i, 5
    client = api.client_for(alice)
    saved = client.put(f"/api/v1/agent-designs/{design.pk}", {"revision": 1, "graph": graph},
                       format="json")
    assert saved.status_code == 200, saved.content
    response = client.post(publish_url(design), {"revision": 2,
                                                 "evaluation_id": str(passing.pk)},
                           format="json")
    assert response.status_code == 201, response.content
    summary = Version.objects.get().artifact["evaluation"]
    assert summary["evaluation_id"] == str(passing.pk) and summary["passed"] is True
    assert summary["content_sha256"] == passing.content_sha256
    assert (summary["cases"], summary["passed_cases"]) == (1, 1)
    assert summary["judge_scores"] == {"relevance": 0.9} and summary["tool_accuracy"] == 1.0
    assert "completed_at" in summary
    artifact = client.get(f"/api/v1/agent-versions/{response.json()['id']}").json()
    assert artifact["evaluation"] == summary
