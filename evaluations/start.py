"""Starting an evaluation: check the target and the cases, store them, hand over.

The target is fixed here: a published version of the design (`version_id`: its graph
and hash, side effects approved at publish) or a revision of it (`revision`, default
the latest: checked runnable as a run start checks it). The cases are copies of the
fixtures' (all of them, or those named in `cases`), and the evaluation records how many
the design had: one that ran them all may open the quality gate, whether or not it was
started with `gate` (designs.quality_gate). `gate: true` asks for every case: a `cases`
list that leaves one out is refused. The cases then run on the runner
(evaluations.progress), started by a gateway task after this transaction commits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from designs.models import Design, Version
from evaluations import queue
from evaluations.judge import RUBRIC_VERSION, judge_config, judge_destination
from evaluations.models import Evaluation, EvaluationCase, Fixtures
from evaluations.summary import judge_dict
from kionga import audit
from kionga.errors import APIError, invalid_field
from runs import dispatch
from runs.nested import resource_issues
from runs.start import check_runnable_graph


@dataclass(frozen=True)
class StartEvaluation:
    gate: bool
    version_id: str | None
    cases: list[str] | None
    allow_side_effects: bool
    revision: int | None

    @classmethod
    def of(cls, body: dict[str, Any]) -> StartEvaluation:
        """From the body evaluations.serializers.StartEvaluationSerializer validated."""
        version = body["version_id"]
        return cls(body["gate"], str(version) if version else None,
                   None if body["cases"] is None else list(body["cases"]),
                   body["allow_side_effects"], body["revision"])


@dataclass(frozen=True)
class Target:
    revision: int
    version_id: str
    graph: dict[str, Any]
    content_sha256: str
    side_effects_approved: bool


def check_target(design: Design, request: StartEvaluation) -> Target:
    if request.version_id is None:
        number, graph, sha = check_runnable_graph(design, request.revision)
        return Target(number, "", graph, sha, False)
    if request.revision is not None:
        raise invalid_field("revision", "Send version_id or revision, not both.")
    version = Version.objects.filter(pk=request.version_id, design=design).first()
    if version is None:
        raise invalid_field("version_id", "Not a published version of this design.")
    graph = version.artifact["graph"]
    issues = resource_issues(design.project, graph, str(version.pk))
    if issues:
        raise APIError(422, "validation_failed", "This version names resources you can no "
                       "longer use.", {"issues": issues})
    return Target(version.source_revision, str(version.pk), graph, version.content_sha256,
                  True)


@dataclass(frozen=True)
class ChosenCases:
    fixtures_revision: int
    cases: list[dict[str, Any]]  # the cases to run, in their order
    design_cases: int  # how many the design has


def check_cases(design: Design, request: StartEvaluation) -> ChosenCases:
    """The cases to run, or 400."""
    fixtures = Fixtures.objects.filter(design=design).first()
    stored: list[dict[str, Any]] = list(fixtures.cases) if fixtures else []
    if request.cases is None:
        chosen = stored
    else:
        known = {case["id"] for case in stored}
        unknown = [case_id for case_id in request.cases if case_id not in known]
        if unknown:
            raise invalid_field("cases", "Not cases of this design: " + ", ".join(unknown) + ".")
        wanted = set(request.cases)
        chosen = [case for case in stored if case["id"] in wanted]
    if request.gate and len(chosen) < len(stored):
        raise invalid_field("cases", f"A gate evaluation runs every case: this list names "
                            f"{len(chosen)} of the design's {len(stored)}; leave cases out.")
    if not chosen:
        raise invalid_field("cases", "There is no test case to evaluate: add fixtures first.")
    return ChosenCases(fixtures.revision if fixtures else 0, chosen, len(stored))


def do_start_evaluation(user: User, design: Design, request: StartEvaluation) -> Evaluation:
    dispatch.check_runner_configured()
    target = check_target(design, request)
    chosen = check_cases(design, request)
    judge = judge_config()
    with transaction.atomic():
        evaluation = Evaluation.objects.create(
            project=design.project, design=design, revision=target.revision,
            version_id=target.version_id, content_sha256=target.content_sha256,
            graph=target.graph, gate=request.gate,
            allow_side_effects=request.allow_side_effects or target.side_effects_approved,
            fixtures_revision=chosen.fixtures_revision, design_cases=chosen.design_cases,
            judge_backend=judge.backend, judge_model=judge.model,
            rubric_version=RUBRIC_VERSION, judge_chosen_by=judge.chosen_by,
            judge_destination=judge_destination(design.project, judge), created_by=user)
        EvaluationCase.objects.bulk_create([
            EvaluationCase(evaluation=evaluation, position=index, case_id=case["id"],
                           name=case["name"], case=case)
            for index, case in enumerate(chosen.cases)])
        audit.record("evaluation.started", project=design.project, actor=user,
                     target_type="evaluation", target_id=evaluation.pk,
                     details={"design_id": str(design.pk), "revision": target.revision,
                              "version_id": target.version_id or None,
                              "content_sha256": target.content_sha256, "cases": len(chosen.cases),
                              "design_cases": chosen.design_cases, "gate": request.gate,
                              "judge": judge_dict(evaluation)})
        evaluation_id = str(evaluation.pk)
        transaction.on_commit(lambda: queue.send_advance(evaluation_id))
    return evaluation
