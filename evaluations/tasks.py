"""Celery tasks of evaluations, run by the gateway's worker: a few lines each, calling
plain functions (evaluations.progress). Both are idempotent: a redelivered task finds
its claims taken and does nothing twice."""

from __future__ import annotations

import logging

from celery import shared_task

from evaluations import progress

log = logging.getLogger(__name__)


@shared_task(name="evaluations.advance")
def advance_task(evaluation_id: str) -> None:
    """Start the evaluation's waiting cases while it has room; finish it when none is left."""
    progress.advance(evaluation_id)


@shared_task(name="evaluations.settle")
def settle_task(case_ids: list[int]) -> None:
    """Cases whose run (or judge run) ended: score them, then advance their evaluations."""
    progress.settle(case_ids)


@shared_task(name="evaluations.sweep")
def sweep_task() -> None:
    """From the beat: settle and advance what a lost task left waiting. Celery's own
    lines about it are quiet (KIONGA_QUIET_TASKS): it logs only a sweep that advanced."""
    advanced = progress.sweep()
    if advanced:
        log.info("Advanced %d evaluation(s) with nothing in flight.", advanced)
