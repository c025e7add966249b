"""start() / execute(): one signed run task, from the signature check to the freed slot.

Celery delivers a task at least once in some failures and at most once in others
(engineering-notes, Celery bullet), so correctness comes from Redis, not from acks:
- the claim key (SET NX) makes a redelivered task a no-op;
- the slot lease must still be alive: a slot the gateway reaped (or never took)
  means the run is not ours to start (claim, lease and the cancel key are read in
  one Redis script, runner/claim.py);
- the process's keeper renews the lease while the run lives (runner.host), so a
  killed runner stops renewing and the gateway's reaper ends the run with `runner_lost`.

start() does the checks and the claim in the calling thread (the Celery task's), then
hands the run to the process's event loop (runner.host), where it runs next to the
process's other runs; the task returns at once. execute() is start() waiting for the
run's end (tests, tools).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib
import logging
import ssl
import uuid
from collections.abc import Callable
from dataclasses import replace
from typing import Any, Final, TypeVar

import redis

from runner import protocol, task_signature, tracing
from runner.claim import claim_run
from runner.engine import run_graph
from runner.events import Event
from runner.host import RunBlocked, RunHandle, current_host, host
from runner.http_resources import HttpResources
from runner.listener_http import close_loop_session, loop_session
from runner.records import Record, RecordFn
from runner.request import RunResult
from runner.retry import retrying
from runner.settings import RunnerSettings, load_settings
from runner.sink import REDIS_RETRY, RETRY_SECONDS, EventSink, sink_client
from runner.task_limits import BASE_TIME_LIMIT
from runner.task_payload import (
    NO_SECRETS,
    PayloadError,
    RunTask,
    TaskSecrets,
    parse_task,
    secrets_of,
)

log = logging.getLogger(__name__)

CLAIM_SECONDS: Final = 86_400
# Closing the sink waits for its retries; a little more than those in all.
SINK_CLOSE_SECONDS: Final = RETRY_SECONDS + 15
# How long a process about to exit waits for its listener session to close.
SESSION_CLOSE_SECONDS: Final = 5.0

T = TypeVar("T")
TRACE_SERVICE: Final = "kionga-runner"

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
    # The model backends (runner.backends.make_backend imports them on first use): the
    # OpenAI one's imports (httpx) cost each process ~70-250 ms of CPU on its event
    # loop, in its first run with a model node, while its other runs wait.
    importlib.import_module("runner.backends.mock")
    importlib.import_module("runner.backends.openai")
    _tls_context()
    tracing.tracer(TRACE_SERVICE)  # the SDK's imports, off the event loop (none when off)


def close_listener_session() -> None:
    """Close the process's session to the internal listener (a warm shutdown, after its
    runs ended): its kept-alive connections end with a FIN, not with the process."""
    running = current_host()
    if running is None:
        return
    try:
        asyncio.run_coroutine_threadsafe(close_loop_session(), running.loop).result(
            SESSION_CLOSE_SECONDS)
    except (concurrent.futures.TimeoutError, RuntimeError) as exc:
        log.warning("the listener session did not close: %s", type(exc).__name__)


def _tls_context() -> ssl.SSLContext:
    """Loading the CA bundle costs ~20 ms: once per process, not once per run."""
    if "tls" not in _cache:
        _cache["tls"] = ssl.create_default_context()
    context: ssl.SSLContext = _cache["tls"]
    return context


def execute(payload: Any, signature: Any, *, settings: RunnerSettings | None = None,
            client: redis.Redis | None = None) -> str:
    """Run one task to its end; returns what happened (for logs and tests)."""
    started = start(payload, signature, settings=settings, client=client)
    return started if isinstance(started, str) else started.result()


def start(payload: Any, signature: Any, *, settings: RunnerSettings | None = None,
          client: redis.Redis | None = None, hard_limit: float | None = None
          ) -> str | concurrent.futures.Future[str]:
    """Check and claim one task, then hand its run to the process's event loop: what
    happened when the run does not start (a str), else the future of its outcome.
    Waits while the process already hosts its cap of runs."""
    settings = settings or current_settings()
    client = client or redis_client(settings.redis_url)
    payload = task_signature.opened(payload, signature, settings.token)
    if payload is None:
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
    handle = RunHandle(run_id, secrets.lease, client, hard_limit or BASE_TIME_LIMIT)

    async def body(handle: RunHandle) -> str:
        return await _hosted(handle, settings, payload, secrets, cancelled=claim == "cancelled")

    return host(settings.process_runs, settings.process_cap).submit(handle, body)


async def _hosted(handle: RunHandle, settings: RunnerSettings, payload: dict[str, Any],
                  secrets: TaskSecrets, *, cancelled: bool) -> str:
    """The run on the process's loop, from its sink's opening to its freed slot."""
    run_id, client = handle.run_id, handle.client
    sink: EventSink | None = None
    try:
        sink = EventSink(client, run_id, event_key=secrets.event_key, lease=secrets.lease,
                         project_id=_project_id(payload), on_failed=handle.halt)
        return await _run_claimed(handle, settings, payload, secrets, sink,
                                  cancelled=cancelled)
    finally:
        handle.finishing = True
        task = asyncio.current_task()
        if task is not None:
            while task.uncancel():  # a cancel already delivered must not cut the close
                pass
        if sink is not None and not await sink.aclose(SINK_CLOSE_SECONDS):
            log.error("run %s: %d events could not be written to Redis", run_id, sink.dropped)
        if sink is None or not sink.slot_freed:  # else freed with the terminal event
            await asyncio.get_running_loop().run_in_executor(
                None, _release, client, run_id, secrets.lease)


async def _run_claimed(handle: RunHandle, settings: RunnerSettings, payload: dict[str, Any],
                       secrets: TaskSecrets, sink: EventSink, *, cancelled: bool) -> str:
    run_id = handle.run_id
    if cancelled:
        sink(_ending("run.cancelled", 0, "cancelled", "cancelled", "the run was cancelled"))
        return "cancelled"
    try:
        task = parse_task(payload, settings, secrets)
    except PayloadError as exc:
        log.warning("run %s: unusable payload: %s", run_id, exc)
        sink(_ending("run.failed", 0, "invalid_request", "node_error", str(exc)))
        return "invalid_request"
    return await _run_graph(handle, settings, task, sink)


async def _run_graph(handle: RunHandle, settings: RunnerSettings, task: RunTask,
                     sink: EventSink) -> str:
    run_id = handle.run_id
    # The run's span (runner.tracing; None when tracing is off): its nodes' spans come
    # from their records, and resource calls carry its traceparent.
    trace = tracing.run_trace(TRACE_SERVICE, run_id, task.traceparent, task.request.graph)
    traced = {"traceparent": trace.traceparent} if trace and trace.traceparent else None
    # The loop's one session (runner.listener_http): the run's calls reuse connections
    # other runs opened; its credential goes in each request, never in the session.
    resources = HttpResources(task.callback_url, task.credential,
                              timeout=settings.http_timeout,
                              session=loop_session(_tls_context()), headers=traced)
    emit = handle.emit_through(sink)
    result: RunResult | None = None
    try:
        result = await run_graph(task.request, resources=resources, emit=emit,
                                 cancel=handle.stop,
                                 record=_traced(sink.record, trace) if trace else sink.record)
    except (Exception, RunBlocked, asyncio.CancelledError) as exc:
        # An engine bug, or the host ended the run (a blocked loop, its hard time
        # limit) where the engine could not: the run still ends with one terminal event.
        if handle.ending is None:
            log.exception("run %s: the engine failed", run_id)
        if not sink.terminal_seen:
            ended = handle.ending or ("internal_error", "node_error",
                                      "the runner failed unexpectedly")
            sink(_ending("run.failed", sink.last_seq + 1, *ended))
        if isinstance(exc, asyncio.CancelledError) and handle.ending is None:
            raise
        return handle.ending[0] if handle.ending else "internal_error"
    finally:
        # Before the first await: from here on the host no longer cancels the run's
        # task (its end() runs only while the task waits), so the close is not cut.
        handle.finishing = True
        await resources.aclose()
        if trace is not None:
            _end_trace(trace, handle, result)
    if handle.ending is not None:
        log.info("run %s: ended by the runner: %s", run_id, handle.ending[0])
        return handle.ending[0]
    assert result is not None
    log.info("run %s: %s after %d steps", run_id, result.status, result.steps)
    return result.status


def _traced(record: RecordFn, trace: tracing.RunTrace) -> RecordFn:
    """The sink's record hook, which also makes the node attempt's span."""
    def both(entry: Record) -> None:
        record(entry)
        trace.node(entry)

    return both


def _end_trace(trace: tracing.RunTrace, handle: RunHandle, result: RunResult | None) -> None:
    if result is None or handle.ending is not None:
        reason = handle.ending[0] if handle.ending else "internal_error"
        trace.end("failed", reason)
        return
    trace.end(result.status, result.reason, int(result.usage.get("tokens", 0)),
              float(result.usage.get("cost", 0)))


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

