"""What operations do when runs below them end (runs signal, operations listen)."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from operations.rollups import do_roll_up_ended
from runs.models import Run
from runs.signals import runs_ended


@receiver(runs_ended, sender=Run)
def roll_up_ended_runs(sender: type[Run], runs: list[Run], **kwargs: Any) -> None:
    """Count the runs in the metrics' rollups, in the transaction that stores their end."""
    do_roll_up_ended(runs)
