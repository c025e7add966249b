"""Beat tasks of operations."""

from __future__ import annotations

from celery import shared_task
from django.utils import timezone

from operations.rollups import do_prune


@shared_task(name="operations.prune_rollups")
def prune_rollups_task() -> int:
    """Rollup slots older than the longest metrics window (and a day) go."""
    return do_prune(timezone.now())
