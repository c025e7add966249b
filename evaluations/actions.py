"""Reading an evaluation (access through its project), reviewing a case, and the
evaluation a publish names (designs.quality_gate asks through its registered finder)."""

from __future__ import annotations

import uuid
from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone

from designs.models import Design
from designs.quality_gate import GateEvaluation
from evaluations.models import JUDGE_BY_PROJECT, Evaluation, EvaluationCase
from evaluations.summary import artifact_summary
from kionga import audit
from kionga.access import AnyUser, check_row_access
from kionga.errors import APIError, not_found
from kionga.models import Role

LIST_LIMIT = 50


def check_evaluation_access(user: AnyUser, evaluation_id: uuid.UUID,
                            min_role: str = Role.VIEWER) -> Evaluation:
    """The evaluation if the caller may see it (404 otherwise, 403 for a role too low)."""
    return check_row_access(Evaluation.objects.select_related("created_by", "project"),
                            evaluation_id, user, min_role, "Evaluation not found.")


def cases_of(evaluation: Evaluation) -> list[EvaluationCase]:
    return list(evaluation.cases.select_related("reviewed_by").order_by("position"))


def evaluations_of(design: Design) -> list[tuple[Evaluation, list[EvaluationCase]]]:
    found = list(design.evaluations.select_related("created_by")
                 .prefetch_related("cases")[:LIST_LIMIT])
    return [(evaluation, sorted(evaluation.cases.all(), key=lambda c: c.position))
            for evaluation in found]


def check_case(evaluation: Evaluation, case_id: str) -> EvaluationCase:
    case = evaluation.cases.filter(case_id=case_id).first()
    if case is None:
        raise not_found("Case not found in this evaluation.")
    return case


def do_review(user: User, case: EvaluationCase, status: str, note: str) -> EvaluationCase:
    """A person's verdict on a case with a result; 409 while it has none."""
    with transaction.atomic():
        locked = EvaluationCase.objects.select_for_update().select_related(
            "evaluation").get(pk=case.pk)
        if locked.status not in ("passed", "failed"):
            raise APIError(409, "case_not_finished",
                           f"The case is {locked.status}: review it once it has a result.")
        locked.review_status, locked.review_note = status, note
        locked.reviewed_by, locked.reviewed_at = user, timezone.now()
        locked.save(update_fields=["review_status", "review_note", "reviewed_by",
                                   "reviewed_at"])
        audit.record("evaluation.case_reviewed", project=locked.evaluation.project, actor=user,
                     target_type="evaluation", target_id=locked.evaluation_id,
                     details={"case_id": locked.case_id, "status": status, "note": note})
    return locked


def gate_evaluation(design: Design, evaluation_id: Any) -> GateEvaluation | None:
    """The evaluation of this design a publish names, for the quality gate."""
    try:
        pk = uuid.UUID(str(evaluation_id))
    except ValueError:
        return None
    found = Evaluation.objects.filter(pk=pk, design=design).first()
    if found is None:
        return None
    cases = list(found.cases.all())
    judged_by_project = found.judge_chosen_by == JUDGE_BY_PROJECT and any(c.judged for c in cases)
    return GateEvaluation(status=found.status, design_cases=found.design_cases,
                          summary=artifact_summary(found, cases),
                          project_judge=found.judge_model if judged_by_project else None)
