"""Among many active runs, the reaper takes for lost exactly those whose slot lease is
gone (none, or run out), and asks Redis about all of them in one answer: its pass every
second costs one round trip, not one per run in flight."""

import time
from datetime import timedelta
from typing import Any

import pytest
import redis
from django.utils import timezone

from runner import protocol
from runs import reaper
from runs.models import Run
from tests.designs_helpers import make_design

pytestmark = pytest.mark.django_db(transaction=True)


def _active_runs(alice: Any, acme: Any, count: int) -> list[str]:
    design = make_design(alice, acme)
    runs = Run.objects.bulk_create([
        Run(project=acme, design=design, revision=1, content_sha256="x" * 64,
            created_by=alice, status="running") for _ in range(count)])
    Run.objects.filter(pk__in=[r.pk for r in runs]).update(
        created_at=timezone.now() - timedelta(seconds=30))
    return [str(r.pk) for r in runs]


def test_one_answer_names_the_runs_whose_lease_is_gone(rds: redis.Redis) -> None:
    for run_id in ("alive-1", "alive-2"):
        assert protocol.acquire_slot(rds, run_id, 1_000, 60) == protocol.SLOT_TAKEN
    assert protocol.acquire_slot(rds, "ran-out", 1_000, 0.05) == protocol.SLOT_TAKEN
    time.sleep(0.2)  # its lease runs out
    asked = ["alive-1", "never-admitted", "ran-out", "alive-2"]
    assert protocol.lapsed_slots(rds, asked) == ["never-admitted", "ran-out"]
    assert protocol.lapsed_slots(rds, []) == []


def test_the_reaper_finds_the_lost_among_many_in_one_round_trip(
        alice: Any, acme: Any, rds: redis.Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reaper, "LOST_CONFIRM_SECONDS", 0)
    runs = _active_runs(alice, acme, 60)
    lost = set(runs[::10])
    for run_id in runs:
        if run_id not in lost:
            assert protocol.acquire_slot(rds, run_id, 1_000, 60) == protocol.SLOT_TAKEN
    calls: list[str] = []
    real_eval = rds.eval

    def counting_eval(script: str, numkeys: int, *args: Any) -> Any:
        calls.append(script)
        return real_eval(script, numkeys, *args)

    monkeypatch.setattr(rds, "eval", counting_eval)
    assert reaper.lost_candidates(rds) == []  # first seen: confirmed on the next pass
    calls.clear()
    assert set(reaper.lost_candidates(rds)) == lost
    assert len(calls) == 2  # the slots' sweep and one question about all 60 runs
