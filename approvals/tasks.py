"""Celery tasks of approvals, run by the gateway's ``beat`` worker."""

from __future__ import annotations

from celery import shared_task

from approvals.actions import expire_overdue


@shared_task(name="approvals.expire_overdue")
def expire_overdue_task() -> int:
    """Pending requests past their deadline become expired within a second, read or not."""
    return expire_overdue()
