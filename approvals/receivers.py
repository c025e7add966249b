"""What approvals do when something below them happens (runs signal, approvals listen)."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from approvals.actions import do_cancel_pending_approvals_of
from runs.models import Run
from runs.signals import runs_ended


@receiver(runs_ended, sender=Run)
def cancel_pending_approvals(sender: type[Run], runs: list[Run], **kwargs: Any) -> None:
    """Whatever ended a run (completed, failed, cancelled, runner_lost), nobody may still
    approve a step of it."""
    do_cancel_pending_approvals_of(runs)
