"""Publishing a behaviour that is already a version answers 200 with `created: false`
and a message that says plainly that nothing new was published, why, and what the
returned version carries; an evaluation sent with it is not attached (versions never
change)."""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from designs.models import Design, Version
from designs.validation import revision_report
from evaluations.models import Evaluation, EvaluationCase
from tests.conftest import Api
from tests.evaluations_helpers import calls_only, make_evaluated
from tests.versions_helpers import publish_url


def passing(design: Design) -> str:
    """A complete, passing evaluation of every case of the design's saved revision."""
    sha = revision_report(design.current(), design.project).content_sha256 or ""
    found = Evaluation.objects.create(
        project=design.project, design=design, revision=design.revision, content_sha256=sha,
        design_cases=1, status="completed", passed=True, judge_backend="openai",
        judge_model="judge", rubric_version="kionga-rubric-1", created_by=design.created_by,
        finished_at=timezone.now())
    EvaluationCase.objects.create(evaluation=found, position=0, case_id="c0", name="c0",
                                  case=calls_only("c0", "x"), status="passed")
    return str(found.pk)


def publish(api: Api, user: Any, design: Design, evaluation_id: str | None = None) -> Any:
    body: dict[str, Any] = {"revision": 1}
    if evaluation_id is not None:
        body["evaluation_id"] = evaluation_id
    return api.client_for(user).post(publish_url(design), body, format="json")


def opening(version: dict[str, Any]) -> str:
    return (f"Nothing new was published: revision 1 has the same behaviour as version 1 "
            f"(content_sha256 {version['content_sha256'][:12]}…), which is returned. ")


def test_it_says_a_new_evaluation_was_not_attached_to_a_version_without_one(
        api: Api, alice: Any, acme: Any) -> None:
    design = make_evaluated(alice, acme, [calls_only("c0", "x")])
    first = publish(api, alice, design)
    assert first.status_code == 201 and first.json()["created"] is True
    evaluation_id = passing(design)
    again = publish(api, alice, design, evaluation_id)
    assert again.status_code == 200, again.content
    answer = again.json()
    assert answer["created"] is False and answer["id"] == first.json()["id"]
    assert answer["message"] == opening(answer) + (
        f"Version 1 carries no evaluation summary; evaluation {evaluation_id} was not "
        "attached (a published version never changes).")
    assert Version.objects.get().artifact["evaluation"] is None


def test_it_names_the_evaluation_the_existing_version_carries(
        api: Api, alice: Any, acme: Any) -> None:
    design = make_evaluated(alice, acme, [calls_only("c0", "x")])
    carried = passing(design)
    assert publish(api, alice, design, carried).status_code == 201
    newer = passing(design)
    answer = publish(api, alice, design, newer).json()
    assert answer["message"] == opening(answer) + (
        f"Version 1 carries the evaluation summary of evaluation {carried}; evaluation "
        f"{newer} was not attached (a published version never changes).")
    same = publish(api, alice, design, carried.upper()).json()
    assert same["message"] == opening(same) + (
        f"Version 1 carries the evaluation summary of evaluation {carried}.")
    plain = publish(api, alice, design).json()
    assert plain["message"] == same["message"]
    assert Version.objects.get().artifact["evaluation"]["evaluation_id"] == carried


def test_it_says_what_an_unchanged_publish_without_evaluation_returns(
        api: Api, alice: Any, acme: Any) -> None:
    design = make_evaluated(alice, acme, [calls_only("c0", "x")])
    publish(api, alice, design)
    answer = publish(api, alice, design).json()
    assert answer["created"] is False
    assert answer["message"] == opening(answer) + "Version 1 carries no evaluation summary."
