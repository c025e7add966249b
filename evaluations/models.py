"""Models of the evaluations app: a design's test cases (fixtures), evaluations and
their per-case results."""

from __future__ import annotations

import uuid
from typing import Final

from django.conf import settings
from django.db import models

from designs.models import Design
from kionga.models import Project
from runs.models import Run


class Fixtures(models.Model):
    """A design's test cases, one row per design, with their own revision.

    A PUT claims `revision + 1` with a conditional UPDATE (evaluations.fixtures), so of
    two PUTs of the same revision exactly one wins. A design without a row has
    revision 0 and no cases; the first PUT (revision 0) creates it.
    """

    design = models.OneToOneField(Design, on_delete=models.CASCADE, primary_key=True,
                                  related_name="fixtures")
    revision = models.PositiveIntegerField(default=1)
    cases = models.JSONField(default=list)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "fixtures"

    def __str__(self) -> str:
        return f"{self.design} fixtures r{self.revision}"


# Status words, declared once (the API, the admin and the progress code import them).
EVALUATION_STATUSES: Final = ("queued", "running", "completed", "failed", "cancelled")
EVALUATION_ACTIVE: Final = ("queued", "running")
# A case: queued → running (its run) → [to_judge → judging (the judge's run)] → passed
# or failed; cancelled when its evaluation is cancelled before it ends.
CASE_STATUSES: Final = ("queued", "running", "to_judge", "judging", "passed", "failed",
                        "cancelled")
CASE_WAITING: Final = ("queued", "to_judge")  # waits for a runner slot
CASE_IN_FLIGHT: Final = ("running", "judging")  # holds a runner slot
CASE_FINAL: Final = ("passed", "failed", "cancelled")
REVIEW_STATUSES: Final = ("accepted", "rejected", "needs_changes")
# Who chose the model that judges: the operator (a platform backend model, named in the
# gateway's environment) or the project (`resource:<ID>`, a model resource whose URL and
# key the project's admins set). docs/decisions/staff-gates-need-the-operators-judge.md.
JUDGE_BY_OPERATOR: Final = "operator"
JUDGE_BY_PROJECT: Final = "project"
JUDGE_CHOSEN_BY: Final = (JUDGE_BY_OPERATOR, JUDGE_BY_PROJECT)


def _choices(words: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(word, word) for word in words]


class Evaluation(models.Model):
    """One evaluation of a design's revision or published version against its cases.

    The target (graph and content_sha256) is fixed when it starts; each case runs as an
    ordinary run, then is judged (evaluations.progress).
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    design = models.ForeignKey(Design, on_delete=models.CASCADE, related_name="evaluations")
    revision = models.PositiveIntegerField()
    version_id = models.CharField(max_length=64, blank=True)
    content_sha256 = models.CharField(max_length=64)
    # The normalized graph the cases run (a published version's, or the revision's).
    graph = models.JSONField(default=dict)
    gate = models.BooleanField(default=False)
    allow_side_effects = models.BooleanField(default=False)
    fixtures_revision = models.PositiveIntegerField(default=0)
    # How many test cases the design had when this evaluation started: it ran every case
    # (and may open the quality gate) when it ran that many. None: started before this
    # was recorded and not determinable since (its fixtures changed).
    design_cases = models.PositiveIntegerField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=_choices(EVALUATION_STATUSES),
                              default="queued")
    passed = models.BooleanField(null=True, blank=True)
    error = models.JSONField(null=True, blank=True)
    judge_backend = models.CharField(max_length=32)
    judge_model = models.CharField(max_length=200)
    rubric_version = models.CharField(max_length=32)
    judge_chosen_by = models.CharField(max_length=16, choices=_choices(JUDGE_CHOSEN_BY),
                                       default=JUDGE_BY_OPERATOR)
    # A project-chosen judge: the host (and port) its model resource pointed at when the
    # evaluation started ("" for the operator's judge, or no such resource); a case judged
    # while it pointed elsewhere fails. None: started before this was recorded.
    judge_destination = models.CharField(max_length=300, blank=True, null=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["design", "-created_at"], name="evaluation_design")]

    def __str__(self) -> str:
        return f"evaluation {self.pk} ({self.status})"


class EvaluationCase(models.Model):
    """One case of an evaluation: a copy of the test case, its run, judge run and result."""

    evaluation = models.ForeignKey(Evaluation, on_delete=models.CASCADE, related_name="cases")
    position = models.PositiveIntegerField()
    case_id = models.CharField(max_length=64)
    name = models.CharField(max_length=200)
    case = models.JSONField()
    status = models.CharField(max_length=16, choices=_choices(CASE_STATUSES), default="queued")
    run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.SET_NULL,
                            related_name="+")
    judge_run = models.ForeignKey(Run, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="+")
    output = models.TextField(null=True, blank=True)
    reason = models.TextField(blank=True)
    tool_accuracy = models.FloatField(null=True, blank=True)
    completed_calls = models.JSONField(default=list, blank=True)
    # The node IDs of the run's node.completed events, in order (evaluations.scoring).
    path = models.JSONField(default=list, blank=True)
    judge_scores = models.JSONField(default=dict, blank=True)
    judge_reason = models.TextField(blank=True)
    review_status = models.CharField(max_length=16, choices=_choices(REVIEW_STATUSES),
                                     blank=True)
    review_note = models.TextField(blank=True)
    reviewed_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                    on_delete=models.SET_NULL, related_name="+")
    reviewed_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["evaluation", "position"]
        constraints = [
            models.UniqueConstraint(fields=["evaluation", "case_id"],
                                    name="evaluation_case_unique"),
        ]
        indexes = [models.Index(fields=["evaluation", "status"], name="evaluation_case_status")]

    def __str__(self) -> str:
        return f"{self.case_id} ({self.status})"

    @property
    def judged(self) -> bool:
        return bool((self.case.get("expected") or {}).get("judge"))
