"""Celery tasks of approvals, run by the gateway's ``beat`` worker."""

from __future__ import annotations

import logging

from celery import shared_task

from approvals.actions import expire_overdue

log = logging.getLogger(__name__)


@shared_task(name="approvals.expire_overdue")
def expire_overdue_task() -> int:
    """Pending requests past their deadline become expired within a second, read or not.

    Runs every second: Celery's own lines about it are quiet (KIONGA_QUIET_TASKS), so it
    logs only a sweep that expired something."""
    expired = expire_overdue()
    if expired:
        log.info("Expired %d overdue approval request(s).", expired)
    return expired
