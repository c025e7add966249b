"""After an ingester dies (kill -9) with entries pending, nothing is lost: its pending
entries are claimed at once by the next one, a run is not reaped while entries of it
are still on the way, events below a stored terminal event are still stored, and what
is committed is trimmed from the stream."""

from typing import Any

import pytest
import redis

from runner import protocol
from runs import ingest, ingest_stream
from runs.models import Run
from tests.ingest_helpers import drain, events, make_run, send, seqs

pytestmark = pytest.mark.django_db(transaction=True)

COMPLETE = ("run.started", "node.started", "node.completed", "run.completed")


def _die_holding(stream: redis.Redis, count: int) -> None:
    """A consumer reads `count` entries and dies before acknowledging them."""
    answer: Any = stream.xreadgroup(protocol.INGEST_GROUP, "dead-1",
                                    {protocol.INGEST_STREAM: ">"}, count=count)
    assert len(answer[0][1]) == count


def _pass(stream: redis.Redis, lost: Run) -> None:
    """The ingester's periodic pass, with `lost` among the runs whose lease is gone."""
    ingest.catch_up_and_reap(stream, "live", [str(lost.pk)])


def test_it_claims_a_dead_consumers_entries_at_start(alice: Any, acme: Any,
                                                     stream: redis.Redis) -> None:
    run = make_run(alice, acme)
    send(stream, run, events(*COMPLETE))
    _die_holding(stream, 4)
    drain(stream, "restarted")  # new entries only: none
    assert seqs(run) == []
    assert ingest.drain_claimed(stream, "restarted", min_idle_ms=0) == 4
    run.refresh_from_db()
    assert run.status == "completed" and seqs(run) == [0, 1, 2, 3]
    assert stream.xpending(protocol.INGEST_STREAM, protocol.INGEST_GROUP)["pending"] == 0


def test_it_stores_events_that_arrive_below_a_stored_end(alice: Any, acme: Any,
                                                         stream: redis.Redis) -> None:
    run = make_run(alice, acme)
    sent = events(*COMPLETE)
    send(stream, run, sent[:2])
    _die_holding(stream, 2)  # run.started and node.started held by the dead one
    send(stream, run, sent[2:])
    drain(stream, "restarted")
    run.refresh_from_db()
    assert run.status == "completed" and seqs(run) == [2, 3]
    late_after_end = {"seq": 4, "type": "node.started", "at": sent[0]["at"]}
    send(stream, run, [late_after_end])
    ingest.drain_claimed(stream, "restarted", min_idle_ms=0)
    drain(stream, "restarted")
    assert seqs(run) == [0, 1, 2, 3]  # below the end: stored; after it: dropped
    run.refresh_from_db()
    assert run.status == "completed" and run.output == "done"


def test_it_does_not_reap_a_run_whose_entries_are_still_pending(
        alice: Any, acme: Any, stream: redis.Redis) -> None:
    run = make_run(alice, acme, status="running")
    send(stream, run, events(*COMPLETE))
    _die_holding(stream, 4)  # idle for less than IDLE_CLAIM_MS: not claimed by a pass
    assert ingest_stream.undrained_runs(stream) == {str(run.pk)}
    _pass(stream, run)
    run.refresh_from_db()
    assert run.status == "running" and seqs(run) == []
    ingest.drain_claimed(stream, "live", min_idle_ms=0)
    assert ingest_stream.undrained_runs(stream) == set()
    _pass(stream, run)
    run.refresh_from_db()
    assert run.status == "completed" and seqs(run) == [0, 1, 2, 3]


def test_it_does_not_reap_a_run_whose_entries_are_not_read_yet(
        alice: Any, acme: Any, stream: redis.Redis) -> None:
    run = make_run(alice, acme, status="running")
    send(stream, run, events(*COMPLETE))
    assert ingest_stream.undrained_runs(stream) == {str(run.pk)}
    drain(stream)
    assert ingest_stream.undrained_runs(stream) == set()


def test_it_still_reaps_a_lost_run_with_nothing_on_the_way(alice: Any, acme: Any,
                                                          stream: redis.Redis) -> None:
    run = make_run(alice, acme, status="running")
    _pass(stream, run)
    run.refresh_from_db()
    assert run.status == "failed" and run.error == {
        "code": "runner_lost", "message": "The runner stopped while the run was active."}


def test_it_trims_what_is_committed(alice: Any, acme: Any, stream: redis.Redis) -> None:
    first, second = make_run(alice, acme), make_run(alice, acme)
    send(stream, first, events(*COMPLETE))
    drain(stream)
    assert ingest_stream.trim_committed(stream) == 4
    assert stream.xlen(protocol.INGEST_STREAM) == 0
    send(stream, second, events(*COMPLETE))
    _die_holding(stream, 1)
    drain(stream)
    # The dead consumer's entry is not committed: it and everything after it stay.
    assert ingest_stream.trim_committed(stream) == 0
    assert stream.xlen(protocol.INGEST_STREAM) == 4
    ingest.drain_claimed(stream, "restarted", min_idle_ms=0)
    assert ingest_stream.trim_committed(stream) == 4
    assert stream.xlen(protocol.INGEST_STREAM) == 0
    assert seqs(second) == [0, 1, 2, 3]
