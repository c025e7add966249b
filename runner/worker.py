"""execute(): one signed run task, from the signature check to the freed slot.

Celery delivers a task at least once in some failures and at most once in others
(engineering-notes, Celery bullet), so correctness comes from Redis, not from acks:
- the claim key (SET NX) makes a redelivered task a no-op;
- the slot lease must still be alive: a slot the gateway reaped (or never took)
  means the run is not ours to start (claim, lease and the cancel key are read in
  one Redis script, runner/claim.py);
- the watcher renews the lease while the run lives, so a killed runner stops
  renewing and the gateway's reaper ends the run with `runner_lost`.
"""

from __future__ import annotations

import logging
import ssl
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Final, TypeVar

import httpx
import redis

from runner import protocol
from runner.claim import claim_run
from runner.engine import run_graph_sync
from runner.events import Event
from runner.http_resources import HttpResources
from runner.retry import retrying
from runner.settings import RunnerSettings, load_settings
from runner.sink import REDIS_RETRY, RETRY_SECONDS, EventSink, sink_client
from runner.task_payload import NO_SECRETS, PayloadError, RunTask, parse_task, secrets_of
from runner.threads import spawn

log = logging.getLogger(__name__)

CLAIM_SECONDS: Final = 86_400
CANCEL_POLL_SECONDS: Final = 0.05
# Closing the sink waits for its retries; a little more than those in all.
SINK_CLOSE_SECONDS: Final = RETRY_SECONDS + 15

T = TypeVar("T")

_cache: dict[str, Any] = {}


def current_settings() -> RunnerSettings:
    if "settings" not in _cache:
        _cache["settings"] = load_settings()
    settings: RunnerSettings = _cache["settings"]
    return settings


def redis_client(url: str) -> redis.Redis:
    """One client per process and URL (redis-py's pool reconnects after a fork)."""
    key = f"redis:{url}"
    if key not in _cache:
        _cache[key] = sink_client(url)
    client: redis.Redis = _cache[key]
    return client


def warm_up() -> None:
    """Load what every run needs once, when a pool process starts, not in its first run."""
    redis_client(current_settings().redis_url)
    _tls_context()


def _tls_context() -> ssl.SSLContext:
    """Loading the CA bundle costs ~20 ms: once per process, not once per run."""
    if "tls" not in _cache:
        _cache["tls"] = ssl.create_default_context()
    context: ssl.SSLContext = _cache["tls"]
    return context


def execute(payload: Any, signature: Any, *, settings: RunnerSettings | None = None,
            client: redis.Redis | None = None) -> str:
    """Run one task; returns what happened (for logs and tests)."""
    settings = settings or current_settings()
    client = client or redis_client(settings.redis_url)
    if not protocol.verify(payload, signature, settings.token):
        # Never log the payload: it carries the run credential.
        log.warning("dropped a run task with an invalid signature")
        return "bad_signature"
    run_id = payload.get("run_id")
    if not isinstance(run_id, str) or not 0 < len(run_id) <= 200:
        log.warning("dropped a signed run task without a valid run_id")
        return "invalid"
    secrets = secrets_of(payload, settings.token)
    if secrets == NO_SECRETS:
        # Without its lease token the run has no slot here, and without its event key
        # nothing it reports would be believed: the gateway's reaper ends it.
        log.warning("run %s: its sealed secrets are missing or do not open with this "
                    "runner's token; not running it", run_id)
        return "invalid"
    # Claim, slot lease and cancel request in one round trip (runner.claim).
    mine = f"runner-{uuid.uuid4().hex}"
    claim = _retrying(lambda: claim_run(client, run_id, mine, CLAIM_SECONDS, secrets.lease),
                      f"run {run_id}: claim")
    if claim == "duplicate":
        log.info("run %s: already claimed (redelivered, cancelled or reaped); skipped", run_id)
        return "duplicate"
    if claim == "no_slot":
        log.warning("run %s: its slot is gone (reaped, or never taken); not running it", run_id)
        return "no_slot"
    sink: EventSink | None = None
    try:
        sink = EventSink(client, run_id, event_key=secrets.event_key, lease=secrets.lease,
                         project_id=_project_id(payload))
        return _run_claimed(client, settings, run_id, payload, sink,
                            cancelled=claim == "cancelled")
    finally:
        if sink is not None and not sink.close(SINK_CLOSE_SECONDS):
            log.error("run %s: %d events could not be written to Redis", run_id, sink.dropped)
        if sink is None or not sink.slot_freed:  # else freed with the terminal event
            _release(client, run_id, secrets.lease)


def _run_claimed(client: redis.Redis, settings: RunnerSettings, run_id: str,
                 payload: dict[str, Any], sink: EventSink, *, cancelled: bool) -> str:
    if cancelled:
        sink(_ending("run.cancelled", 0, "cancelled", "cancelled", "the run was cancelled"))
        return "cancelled"
    try:
        task = parse_task(payload, settings)
    except PayloadError as exc:
        log.warning("run %s: unusable payload: %s", run_id, exc)
        sink(_ending("run.failed", 0, "invalid_request", "node_error", str(exc)))
        return "invalid_request"
    return _run_graph(client, settings, run_id, task, sink)


def _run_graph(client: redis.Redis, settings: RunnerSettings, run_id: str, task: RunTask,
               sink: EventSink) -> str:
    # No keep-alive: every connection closes when the run ends (the transport is the
    # run's), so no socket of one run's credential outlives it on the thread's loop.
    transport = httpx.AsyncHTTPTransport(verify=_tls_context(),
                                         limits=httpx.Limits(max_keepalive_connections=0))
    resources = HttpResources(task.callback_url, task.credential,
                              timeout=settings.http_timeout, transport=transport)
    cancel = threading.Event()
    with Watcher(client, run_id, task.lease, cancel, sink):
        try:
            result = run_graph_sync(task.request, resources=resources, emit=sink, cancel=cancel,
                                    record=sink.record)
        except Exception:  # an engine bug: the run must still end with one terminal event
            log.exception("run %s: the engine failed", run_id)
            if not sink.terminal_seen:
                sink(_ending("run.failed", sink.last_seq + 1, "internal_error", "node_error",
                             "the runner failed unexpectedly"))
            return "internal_error"
    log.info("run %s: %s after %d steps", run_id, result.status, result.steps)
    return result.status


def _project_id(payload: dict[str, Any]) -> int | None:
    """The run's project, whose live-stream budget its stream shares (runner.live)."""
    project = payload.get("project_id")
    return project if type(project) is int else None


def _ending(type_: str, seq: int, reason: str, code: str, message: str) -> Event:
    return protocol.ending_event(type_, seq, reason=reason, code=code, message=message)


def _release(client: redis.Redis, run_id: str, lease: str) -> None:
    # After the sink closed: the gateway must never see the slot free while the
    # terminal event is not in Redis yet (it would take the run for lost).
    if not lease:
        return  # no slot of ours to free
    try:
        _retrying(lambda: protocol.free_lease(client, lease), f"run {run_id}: release",
                  seconds=10.0)
    except redis.RedisError:
        log.warning("run %s: could not free its slot; its lease will run out", run_id)


def _retrying(call: Callable[[], T], what: str, *, seconds: float = RETRY_SECONDS) -> T:
    """call(), retried with backoff while Redis is unreachable (e.g. restarting)."""
    return retrying(call, replace(REDIS_RETRY, deadline=seconds), f"{what}: Redis unreachable")


class Watcher:
    """While a run lives: renew its slot lease and notice a cancel request.

    A thread (one the worker process reuses, runner.threads), not a task in the run's
    event loop, so a run that hogs its loop still keeps its lease. A lease found dead
    means the gateway may have ended the run (and may give the slot away), so the run
    stops; so it does when the sink failed (the
    engine also notices at its next event: the sink raises then).
    """

    def __init__(self, client: redis.Redis, run_id: str, lease: str,
                 cancel: threading.Event, sink: EventSink) -> None:
        self._client = client
        self._run_id = run_id
        self._lease = lease
        self._cancel = cancel
        self._sink = sink
        self._stop = threading.Event()
        self._done: threading.Event | None = None
        self._unreachable = False

    def __enter__(self) -> Watcher:
        self._done = spawn(self._loop, "watch")
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._done is not None:
            self._done.wait()

    def _loop(self) -> None:
        renew_at = time.monotonic() + protocol.HEARTBEAT_SECONDS
        while not self._stop.wait(CANCEL_POLL_SECONDS):
            try:
                self._check_cancel()
                if time.monotonic() >= renew_at:
                    self._renew()
                    renew_at = time.monotonic() + protocol.HEARTBEAT_SECONDS
                self._unreachable = False
            except redis.RedisError as exc:
                if not self._unreachable:
                    log.warning("run %s: Redis unreachable (%s); the run goes on",
                                self._run_id, type(exc).__name__)
                self._unreachable = True
            if self._sink.failed or self._sink.error is not None:
                self._cancel.set()

    def _check_cancel(self) -> None:
        if not self._cancel.is_set() and self._client.exists(protocol.cancel_key(self._run_id)):
            log.info("run %s: cancel requested", self._run_id)
            self._cancel.set()

    def _renew(self) -> None:
        if not protocol.renew_lease(self._client, self._lease):
            if not self._cancel.is_set():
                log.warning("run %s: its slot lease ran out; stopping the run", self._run_id)
            self._cancel.set()
