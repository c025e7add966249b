"""Celery tasks of the gateway: thin wrappers around plain functions."""

from __future__ import annotations

from celery import shared_task

from runs.lost_turns import do_end_lost_turns
from runs.prune import prune_runs


@shared_task(name="runs.prune_runs")
def prune_runs_task() -> int:
    return prune_runs()


@shared_task(name="runs.end_lost_turns")
def end_lost_turns_task() -> int:
    """Deployed agents' turns never reported by their deadline end with `turn_lost`."""
    return do_end_lost_turns()
