"""A run whose slot lease ran out ends `runner_lost` only once a second signal confirms
its runner is gone: no new stored event for LOST_CONFIRM_SECONDS since the lease was
first seen gone. A run whose runner still sends events is not failed; a truly lost one
still ends `runner_lost`. Through the events process's own pass (runs.ingest)."""

import time
from datetime import timedelta
from typing import Any

import pytest
import redis
from django.utils import timezone

from runner import protocol
from runs import ingest, reaper
from runs.models import Run
from tests.designs_helpers import make_design
from tests.ingest_helpers import events, send, seqs

pytestmark = pytest.mark.django_db(transaction=True)

CONFIRM = 0.5  # LOST_CONFIRM_SECONDS in these tests


@pytest.fixture(autouse=True)
def quick_confirm(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reaper, "LOST_CONFIRM_SECONDS", CONFIRM)


def lapsed_run(alice: Any, acme: Any, stream: redis.Redis) -> Run:
    """A running run with its first events stored, whose slot lease has just run out."""
    run = Run.objects.create(project=acme, design=make_design(alice, acme), revision=1,
                             content_sha256="x" * 64, created_by=alice, status="running")
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() - timedelta(seconds=30))
    assert protocol.acquire_slot(stream, str(run.pk), 1_000_000, 0.2) == protocol.SLOT_TAKEN
    send(stream, run, events("run.started", "node.started"))
    events_pass(stream)
    time.sleep(0.3)
    assert not protocol.slot_alive(stream, str(run.pk))
    return run


def events_pass(stream: redis.Redis) -> None:
    """The periodic pass of `manage.py run_events`: lost leases, drain, reap."""
    ingest.catch_up_and_reap(stream, "test", reaper.lost_candidates(stream))


def status(run: Run) -> str:
    run.refresh_from_db()
    return run.status


def test_a_run_whose_runner_still_signals_is_not_failed(alice: Any, acme: Any,
                                                        stream: redis.Redis) -> None:
    run = lapsed_run(alice, acme, stream)
    events_pass(stream)  # the lapse is seen
    for seq in range(2, 5):
        time.sleep(CONFIRM + 0.2)  # longer than the confirmation takes
        send(stream, run, [{"seq": seq, "type": "node.completed", "at": protocol.now_iso(),
                            "node_id": "input", "attempt": 1, "output": "x"}])
        events_pass(stream)
        assert status(run) == "running"
    assert seqs(run) == [0, 1, 2, 3, 4]


def test_a_truly_lost_run_still_ends_runner_lost(alice: Any, acme: Any,
                                                 stream: redis.Redis) -> None:
    run = lapsed_run(alice, acme, stream)
    events_pass(stream)
    assert status(run) == "running"  # a lease gone alone is not enough
    time.sleep(CONFIRM + 0.2)
    events_pass(stream)
    assert status(run) == "failed" and run.error is not None
    assert run.error["code"] == "runner_lost"
    assert seqs(run) == [0, 1, 2]
