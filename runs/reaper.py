"""End runs whose runner is gone: no run stays `running` forever.

A run's slot lease is renewed by its runner; when the lease has run out and the run
is still active after the events that were already sent are stored, the runner
died (kill -9, lost host, dropped task). The run then ends with `run.failed`,
reason `runner_lost`, written here as its next event.
"""

from __future__ import annotations

from datetime import timedelta

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


def lost_candidates(client: redis.Redis) -> list[str]:
    """Active runs whose slot lease is gone. Call BEFORE draining events, then reap."""
    ids = [str(pk) for pk in Run.objects.filter(
        status__in=ACTIVE_STATUSES, created_at__lt=timezone.now() - GRACE
    ).values_list("pk", flat=True)[:1000]]
    return [run_id for run_id in ids if not protocol.slot_alive(client, run_id)]


def reap(client: redis.Redis, run_ids: list[str]) -> int:
    reaped = 0
    for run_id in run_ids:
        reaped += _reap_one(client, run_id)
    return reaped


def _reap_one(client: redis.Redis, run_id: str) -> int:
    with transaction.atomic():
        run = Run.objects.select_for_update().filter(pk=run_id,
                                                     status__in=ACTIVE_STATUSES).first()
        if run is None:
            return 0
        last = RunEvent.objects.filter(run=run).aggregate(m=Max("seq"))["m"]
        event = protocol.ending_event(
            "run.failed", 0 if last is None else last + 1, reason="runner_lost",
            code="runner_lost", message="The runner stopped while the run was active.")
        RunEvent.objects.create(run=run, seq=event["seq"], type=event["type"], data=event)
        run.save(update_fields=apply_event(run, event))
        do_finish_run(run)
    # A late or redelivered task must not start it again; live readers see the end.
    client.set(protocol.claim_key(run_id), "reaped", ex=86400)
    publish_event(client, run_id, event, store=False)  # stored above already
    return 1
