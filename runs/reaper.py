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

# A run younger than this cannot have lost its runner yet (its slot was just taken).
GRACE = timedelta(seconds=2)
# How long a run whose lease is gone must stay quiet (no new stored event) to be lost:
# a live runner notices a dead lease within a heartbeat and ends the run itself.
LOST_CONFIRM_SECONDS = 3 * protocol.HEARTBEAT_SECONDS
LAPSE_TTL_SECONDS: Final = 3600

# Reasons (and error codes) of the run.failed events the gateway writes.
RUNNER_LOST: Final = "runner_lost"
EVENT_REJECTED: Final = "event_rejected"
MESSAGES: Final = {
    RUNNER_LOST: "The runner stopped while the run was active.",
    EVENT_REJECTED: "An event of the run could not be stored; the run was stopped.",
}
# How long the claim and cancel keys the gateway sets outlive the run.
KEY_SECONDS: Final = 86_400


def lapse_key(run_id: str) -> str:
    """When the run's lease was first seen gone, and its last stored seq then (the
    gateway's alone: the runner's Redis user cannot touch it)."""
    return f"kionga:run:{run_id}:lapsed"


# KEYS: the run's lapse record. ARGV: its last stored seq now, LOST_CONFIRM_SECONDS,
# the record's TTL. 1 once the seq has not moved for that long since it was recorded;
# else (re)records it: first sight of the lapse, or the run stored something since.
_CONFIRM: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local seen = redis.call('HMGET', KEYS[1], 'at', 'seq')
if seen[1] and seen[2] == ARGV[1] then
  if now - tonumber(seen[1]) >= tonumber(ARGV[2]) then return 1 end
  return 0
end
redis.call('HSET', KEYS[1], 'at', tostring(now), 'seq', ARGV[1])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[3]))
return 0
"""


def lost_candidates(client: redis.Redis) -> list[str]:
    """Active runs whose slot lease is gone and whose stored events have been quiet
    since, for LOST_CONFIRM_SECONDS. Call BEFORE draining events, then reap."""
    protocol.sweep_slots(client)  # and slots whose lease is gone leave the index
    ids = [str(pk) for pk in Run.objects.filter(
        status__in=ACTIVE_STATUSES, created_at__lt=timezone.now() - GRACE,
        agent__isnull=True,  # a deployed agent's turns have no runner slot
    ).values_list("pk", flat=True)[:1000]]
    lapsed = [run_id for run_id in ids if not protocol.slot_alive(client, run_id)]
    if not lapsed:
        return []
    last = _last_seqs(lapsed)
    return [run_id for run_id in lapsed if client.eval(
        _CONFIRM, 1, lapse_key(run_id), last.get(run_id, -1), LOST_CONFIRM_SECONDS,
        LAPSE_TTL_SECONDS)]


def _last_seqs(run_ids: list[str]) -> dict[str, int]:
    rows = RunEvent.objects.filter(run_id__in=run_ids).values("run_id").annotate(m=Max("seq"))
    return {str(row["run_id"]): int(row["m"]) for row in rows}


def reap(client: redis.Redis, run_ids: list[str]) -> int:
    return sum(fail_run(client, run_id, RUNNER_LOST, quiet_at=_quiet_seq(client, run_id))
               for run_id in run_ids)


def _quiet_seq(client: redis.Redis, run_id: str) -> int | None:
    """The last stored seq lost_candidates saw the run quiet at (None: not recorded)."""
    seq: Any = client.hget(lapse_key(run_id), "seq")
    return None if seq is None else int(seq)


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
    # A late or redelivered task must not start it again, a runner still executing
    # it must stop; live readers see the end.
    pipe = client.pipeline(transaction=False)
    pipe.set(protocol.claim_key(run_id), "reaped", ex=KEY_SECONDS)
    pipe.set(protocol.cancel_key(run_id), "1", ex=KEY_SECONDS)
    pipe.execute()
    publish_event(client, run_id, event, store=False)  # stored above already
    return 1
