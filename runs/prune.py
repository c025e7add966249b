"""Pruning: runs older than KIONGA_RUN_RETENTION_DAYS go, with their events, audited."""

from __future__ import annotations

import uuid
from collections import defaultdict
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from kionga import audit
from kionga.models import Project
from runs.models import FINAL_STATUSES, Run

BATCH = 1000


def prune_runs(now: datetime | None = None, days: int | None = None) -> int:
    """Delete finished runs created before the retention window; returns how many."""
    keep_days = settings.KIONGA_RUN_RETENTION_DAYS if days is None else days
    cutoff = (now or timezone.now()) - timedelta(days=keep_days)
    total = 0
    while True:
        with transaction.atomic():
            old = list(Run.objects.filter(created_at__lt=cutoff, status__in=FINAL_STATUSES)
                       .values_list("pk", "project_id")[:BATCH])
            if not old:
                return total
            Run.objects.filter(pk__in=[pk for pk, _ in old]).delete()  # events cascade
            _audit(old, keep_days)
        total += len(old)


def _audit(pruned: list[tuple[uuid.UUID, int]], keep_days: int) -> None:
    by_project: dict[int, list[str]] = defaultdict(list)
    for pk, project_id in pruned:
        by_project[project_id].append(str(pk))
    projects = Project.objects.in_bulk(list(by_project))
    for project_id, run_ids in by_project.items():
        audit.record("run.pruned", project=projects.get(project_id), target_type="run",
                     target_id="", details={"count": len(run_ids), "run_ids": run_ids,
                                            "retention_days": keep_days})
