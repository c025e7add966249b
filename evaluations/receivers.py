"""What evaluations do when a run below them ends (runs signal, evaluations listen)."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from evaluations import progress
from evaluations.models import EvaluationCase
from kionga import prepared_sql
from runs.models import Run
from runs.signals import runs_ended

_CASES_OF = (f"SELECT id FROM {EvaluationCase._meta.db_table} "
             "WHERE run_id = ANY(%b::uuid[]) OR judge_run_id = ANY(%b::uuid[])")


def cases_of(runs: list[Run]) -> list[int]:
    """The cases whose run or judge run is one of `runs` (a prepared statement: the
    ingester asks for every batch of ended runs, and most are no case's)."""
    ids = [run.pk for run in runs]
    return [row[0] for row in prepared_sql.fetch_all(_CASES_OF, [ids, ids])]


@receiver(runs_ended, sender=Run)
def settle_evaluation_cases(sender: type[Run], runs: list[Run], **kwargs: Any) -> None:
    """A case's run or judge run ended: score it in the transaction that stores this end,
    and start what its evaluation has room for once committed (one query per batch of
    ended runs; evaluations.progress.settle_ended)."""
    case_ids = cases_of(runs)
    if case_ids:
        progress.settle_ended(case_ids)
