"""Celery tasks of triggers: thin wrappers around plain functions."""

from __future__ import annotations

from celery import shared_task

from triggers.dispatch import RuntimeNotReached, do_hand_over
from triggers.schedules import do_fire_schedule


@shared_task(name="triggers.start_turn", autoretry_for=(RuntimeNotReached,),
             retry_backoff=2, retry_backoff_max=60, max_retries=6)
def start_turn_task(turn_id: str) -> bool:
    """Hand a triggered turn to its runtime; idempotent (a claimed turn is left alone)."""
    return do_hand_over(turn_id)


@shared_task(name="triggers.fire_schedule")
def fire_schedule_task(trigger_id: str) -> str | None:
    """Beat's call for a due schedule: one turn per due time however often it runs."""
    return do_fire_schedule(trigger_id)
