"""A run whose runner is gone (lease expired) ends with runner_lost; a live one is left alone."""

from datetime import timedelta
from typing import Any

import pytest
import redis
from django.utils import timezone

from contracts.schemas import schema_errors
from runner import protocol
from runs import reaper
from runs.credentials import find_active_run, issue_credential
from runs.models import Run, RunEvent
from tests.designs_helpers import make_design

pytestmark = pytest.mark.django_db(transaction=True)


def _old_run(alice: Any, acme: Any, status: str = "running") -> Run:
    run = Run.objects.create(project=acme, design=make_design(alice, acme), revision=1,
                             content_sha256="x" * 64, created_by=alice, status=status)
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(seconds=30))
    RunEvent.objects.create(run=run, seq=0, type="run.started",
                            data={"seq": 0, "type": "run.started", "at": "x"})
    return run


def test_it_ends_a_run_whose_lease_expired(alice: Any, acme: Any, rds: redis.Redis,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reaper, "LOST_CONFIRM_SECONDS", 0)
    run = _old_run(alice, acme)
    credential = issue_credential(run)
    assert reaper.lost_candidates(rds) == []  # first seen: confirmed on the next pass
    lost = reaper.lost_candidates(rds)
    assert lost == [str(run.pk)]
    assert reaper.reap(rds, lost) == 1
    run.refresh_from_db()
    assert run.status == "failed" and run.error == {
        "code": "runner_lost", "message": "The runner stopped while the run was active."}
    last = RunEvent.objects.filter(run=run).order_by("-seq").first()
    assert last is not None and (last.seq, last.data["reason"]) == (1, "runner_lost")
    assert schema_errors("run-event.v1", last.data) == []
    assert find_active_run(credential) is None
    assert rds.get(protocol.claim_key(str(run.pk))) == b"reaped"
    assert reaper.reap(rds, lost) == 0  # only once


def test_it_leaves_runs_with_a_live_lease(alice: Any, acme: Any, rds: redis.Redis) -> None:
    run = _old_run(alice, acme)
    protocol.acquire_slot(rds, str(run.pk), 8, lease_seconds=10)
    assert reaper.lost_candidates(rds) == []


def test_it_ignores_finished_and_brand_new_runs(alice: Any, acme: Any, rds: redis.Redis) -> None:
    _old_run(alice, acme, status="completed")
    Run.objects.create(project=acme, design=make_design(alice, acme), revision=1,
                       content_sha256="x" * 64, created_by=alice)
    assert reaper.lost_candidates(rds) == []
