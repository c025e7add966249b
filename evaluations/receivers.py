"""What evaluations do when a run below them ends (runs signal, evaluations listen)."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import Q
from django.dispatch import receiver

from evaluations import queue
from evaluations.models import EvaluationCase
from runs.models import Run
from runs.signals import runs_ended


@receiver(runs_ended, sender=Run)
def settle_evaluation_cases(sender: type[Run], runs: list[Run], **kwargs: Any) -> None:
    """A case's run or judge run ended: score it once this end is stored (one query per
    batch of ended runs, one task for all the batch's cases)."""
    ids = [run.pk for run in runs]
    case_ids = list(EvaluationCase.objects.filter(Q(run_id__in=ids) | Q(judge_run_id__in=ids))
                    .values_list("pk", flat=True))
    if case_ids:
        transaction.on_commit(lambda: queue.send_settle(case_ids))
