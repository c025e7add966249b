"""Runs the gateway ends itself with `run.failed`: lost runners and refused events.

A run's slot lease is renewed by its runner; when the lease has run out, the run is
still active after the events that were already sent are stored, none of its entries
is still waiting in the ingest stream, and — the second signal — it has stored no new
event for LOST_CONFIRM_SECONDS since its lease was first seen gone, the runner died
(kill -9, lost host, dropped task). The run then ends with reason `runner_lost`. A
runner that is alive but lost its lease (a stall, a Redis failover) notices at its
next renewal and ends the run itself, in that time; a run that goes on storing events
is not taken for lost. Stored events count, not live entries: they carry the run's
MAC (no other Redis user can fake them) and are what the run's log is made of.

A run one of whose authentic events the ingester could not store (runs/ingest.py)
ends with reason `event_rejected`: its event log would have a hole.

Either way the gateway writes the run's next event itself, tells a runner that may
still be executing it to stop (cancel key) and a task not started yet not to start
(claim key), and shows the end to live readers.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Final

import redis
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from runner import protocol
from runs.lifecycle import apply_event, do_finish_run
from runs.models import ACTIVE_STATUSES, Run, RunEvent
from runs.publish import publish_event

log = logging.getLogger(__name__)

# A run younger than this cannot have lost its runner yet (its slot was just taken).
GRACE = timedelta(seconds=2)
# How long a run whose lease is gone must stay quiet (no new stored event) to be lost:
# a live runner notices a dead lease within a heartbeat and ends the run itself.
LOST_CONFIRM_SECONDS = 3 * protocol.HEARTBEAT_SECONDS

# Reasons (and error codes) of the run.failed events the gateway writes.
RUNNER_LOST: Final = "runner_lost"
EVENT_REJECTED: Final = "event_rejected"
MESSAGES: Final = {
    RUNNER_LOST: "The runner stopped while the run was active.",
    EVENT_REJECTED: "An event of the run could not be stored; the run was stopped.",
}
# How long the claim and cancel keys the gateway sets outlive the run.
KEY_SECONDS: Final = 86_400


@dataclass(frozen=True)
class Lapse:
    """When this process first saw a run's lease gone, and the run's last stored seq then."""

    at: float  # time.monotonic()
    seq: int


# Kept in the process, not in Redis: confirming a lost runner must work while Redis
# refuses writes (full), and several `events` processes each confirming on their own
# is harmless (fail_run ends a run once, under its row lock).
_lapses: dict[str, Lapse] = {}


def _confirmed(run_id: str, seq: int, now: float) -> bool:
    """True once the run's last stored seq has not moved for LOST_CONFIRM_SECONDS since
    its lapse was first seen; else (re)records the lapse."""
    seen = _lapses.get(run_id)
    if seen is not None and seen.seq == seq:
        return now - seen.at >= LOST_CONFIRM_SECONDS
    _lapses[run_id] = Lapse(now, seq)
    return False


def lost_candidates(client: redis.Redis) -> list[str]:
    """Active runs whose slot lease is gone and whose stored events have been quiet
    since, for LOST_CONFIRM_SECONDS. Call BEFORE draining events, then reap."""
    protocol.sweep_slots(client)  # and slots whose lease is gone leave the index
    ids = [str(pk) for pk in Run.objects.filter(
        status__in=ACTIVE_STATUSES, created_at__lt=timezone.now() - GRACE,
        agent__isnull=True,  # a deployed agent's turns have no runner slot
    ).values_list("pk", flat=True)[:1000]]
    lapsed = protocol.lapsed_slots(client, ids)  # one round trip for all of them
    if not lapsed:
        return []
    for gone in set(_lapses) - set(lapsed):  # ended, or its lease came back
        del _lapses[gone]
    last, now = _last_seqs(lapsed), time.monotonic()
    return [run_id for run_id in lapsed if _confirmed(run_id, last.get(run_id, -1), now)]


def _last_seqs(run_ids: list[str]) -> dict[str, int]:
    rows = RunEvent.objects.filter(run_id__in=run_ids).values("run_id").annotate(m=Max("seq"))
    return {str(row["run_id"]): int(row["m"]) for row in rows}


def reap(client: redis.Redis, run_ids: list[str]) -> int:
    return sum(fail_run(client, run_id, RUNNER_LOST, quiet_at=_quiet_seq(run_id))
               for run_id in run_ids)


def _quiet_seq(run_id: str) -> int | None:
    """The last stored seq lost_candidates saw the run quiet at (None: not recorded)."""
    seen = _lapses.get(run_id)
    return None if seen is None else seen.seq


def fail_run(client: redis.Redis, run_id: str, reason: str, *,
             quiet_at: int | None = None) -> int:
    """End an active run with run.failed (`reason` is also the error code); 1 if it
    was active, else 0 (already ended: nothing is written). `quiet_at`: only if its
    last stored seq is still this one (an event stored since: its runner still signals)."""
    with transaction.atomic():
        run = Run.objects.select_for_update().filter(pk=run_id,
                                                     status__in=ACTIVE_STATUSES).first()
        if run is None:
            return 0
        last = RunEvent.objects.filter(run=run).aggregate(m=Max("seq"))["m"]
        if quiet_at is not None and (-1 if last is None else last) != quiet_at:
            return 0
        event = protocol.ending_event("run.failed", 0 if last is None else last + 1,
                                      reason=reason, code=reason, message=MESSAGES[reason])
        RunEvent.objects.create(run=run, seq=event["seq"], type=event["type"], data=event)
        run.save(update_fields=apply_event(run, event))
        do_finish_run(run)
    _tell_redis(client, run_id, event)
    return 1


def _tell_redis(client: redis.Redis, run_id: str, event: dict[str, Any]) -> None:
    """After the ending is committed: a late or redelivered task must not start the
    run again, a runner still executing it must stop, live readers see the end. Best
    effort: the stored ending is the record, and Redis refusing these (full,
    restarting) must not stop the ingester. Without them a late task still finds its
    slot lease gone and does not start, and a runner still executing the run finds
    its lease gone at its next renewal and stops."""
    try:
        pipe = client.pipeline(transaction=True)
        pipe.set(protocol.claim_key(run_id), "reaped", ex=KEY_SECONDS)
        protocol.request_cancel(pipe, run_id, KEY_SECONDS)
        pipe.execute()
        publish_event(client, run_id, event, store=False)  # stored above already
    except redis.RedisError as exc:
        log.error("run %s ended (%s) but Redis refused the writes that follow (%s: %s); "
                  "the stored ending stands", run_id, event.get("reason"),
                  type(exc).__name__, exc)
