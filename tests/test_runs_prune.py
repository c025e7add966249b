"""Pruning removes finished runs past the retention window with their events, audited."""

from datetime import timedelta
from typing import Any

from django.utils import timezone

from kionga.models import AuditEvent
from runs.models import Run, RunEvent
from runs.prune import prune_runs
from runs.tasks import prune_runs_task
from tests.designs_helpers import make_design


def _run(alice: Any, acme: Any, days_old: int, status: str) -> Run:
    run = Run.objects.create(project=acme, design=make_design(alice, acme), revision=1,
                             content_sha256="x" * 64, created_by=alice, status=status)
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(days=days_old))
    RunEvent.objects.create(run=run, seq=0, type="run.started", data={})
    return run


def test_it_prunes_old_finished_runs(alice: Any, acme: Any, settings: Any) -> None:
    settings.KIONGA_RUN_RETENTION_DAYS = 30
    old = _run(alice, acme, 31, "completed")
    recent = _run(alice, acme, 29, "failed")
    active = _run(alice, acme, 40, "running")
    assert prune_runs_task() == 1
    assert set(Run.objects.values_list("pk", flat=True)) == {recent.pk, active.pk}
    assert not RunEvent.objects.filter(run_id=old.pk).exists()
    audit = AuditEvent.objects.get(action="run.pruned")
    assert audit.details["run_ids"] == [str(old.pk)] and audit.project == acme


def test_it_honours_the_configured_days(alice: Any, acme: Any) -> None:
    _run(alice, acme, 3, "completed")
    assert prune_runs(days=5) == 0
    assert prune_runs(days=2) == 1
