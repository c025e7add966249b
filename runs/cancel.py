"""Cancelling a run: tell the runner, or end the run here if no runner has taken it yet."""

from __future__ import annotations

import logging

import redis
from django.contrib.auth.models import User

from kionga import audit
from kionga.errors import APIError
from kionga.redis_client import sync_redis
from runner import protocol
from runs import quota
from runs.credentials import revoke_credential
from runs.dispatch import release_capacity
from runs.models import Run
from runs.publish import publish_event

log = logging.getLogger(__name__)


def do_cancel_run(user: User, run: Run) -> Run:
    if not run.is_active:
        raise APIError(409, "run_not_active", f"The run is already {run.status}.")
    client = sync_redis()
    try:
        pipe = client.pipeline(transaction=True)
        protocol.request_cancel(pipe, str(run.pk), 86400)
        pipe.execute()
    except quota.REDIS_ERRORS:
        # Redis unreachable or full (it never evicts; it refuses writes): nothing has
        # changed yet, the caller may try again.
        raise quota.redis_unavailable("The run cannot be cancelled right now") from None
    # At once, not when the end is stored: the run may call nothing more. After the
    # cancel key, so a runner refused with run_cancelled finds the key and stops.
    revoke_credential(run)
    audit.record("run.cancel_requested", project=run.project, actor=user, target_type="run",
                 target_id=run.pk)
    try:
        # Claiming the run first means no runner will start it: end it ourselves, at once.
        if client.set(protocol.claim_key(str(run.pk)), "cancelled", nx=True, ex=86400):
            _emit_cancelled(client, str(run.pk))
    except quota.REDIS_ERRORS as exc:
        # The cancel key is set: a runner that claims the run ends it cancelled; one
        # claimed here without its ending ends runner_lost when its lease runs out.
        log.error("run %s: cancel requested, but Redis refused ending it here (%s)",
                  run.pk, type(exc).__name__)
    return run


def _emit_cancelled(client: redis.Redis, run_id: str) -> None:
    event = protocol.ending_event("run.cancelled", 0, reason="cancelled")
    publish_event(client, run_id, event, store=True)
    release_capacity(run_id)
