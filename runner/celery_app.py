"""The runner's Celery app (never the gateway's): `celery -A runner.celery_app worker -Q runner`.

Configuration comes from runner.settings (environment only). A bad configuration
(e.g. a runner token shorter than 16 characters) does not stop the import, so tools
can still load the module, but the worker refuses to start: `celeryd_init` prints
the reason and exits non-zero before the worker connects to anything.

Delivery choices (engineering-notes, Celery bullet):
- task_acks_late=False: the message is acked when the task starts. A worker killed
  mid-run then loses the task, which is what we want: its slot lease stops being
  renewed and the gateway's reaper ends the run with `runner_lost`. With acks_late
  the task would come back only after the visibility timeout (1 h), long after the
  run was reaped, to find its claim key set and do nothing; acks_late would buy
  nothing but a late no-op (or, with task_reject_on_worker_lost, a redelivery loop).
  A message reserved but not started when the worker dies is lost with it (no ack
  emulation, below): its run's queued lease runs out and the reaper ends it the same
  way. A worker stopped cleanly puts its reserved message back on the queue.
- worker_prefetch_multiplier=1: a process reserves one task at a time, so a task
  never waits behind a long run while another process is idle.
- Pool: prefork with concurrency = KIONGA_RUNNER_PROCESSES (default 2: one per core
  of the runner we size for), strictly parsed here, so the Procfile line needs no
  --concurrency. A pool process is not a run: its task checks and claims the run, hands
  it to the process's event loop (runner.host) and returns; a process takes its share
  of the runs, ceil(KIONGA_DESIGNER_MAX_RUNS / processes), and a task that finds its
  process at its share waits up to a second (busy, so the next messages go to another
  process) before it runs anyway.
  Slots in Redis still cap runs across all workers. Why processes and not one: a core
  each; a process that dies (kill -9, a memory blow-up, the host's hard kill of a
  wedged loop) ends only its own runs (runner_lost, via their leases). Why not the
  threads or gevent pools: a thread per waiting run is what this replaced, and gevent
  would patch the sockets the engine's asyncio code uses. The choice and its
  measurements: docs/decisions/many-runs-per-process.md.
  A run's hard time limit (the message's `timelimit`, runner.task_limits) is enforced
  by the host on the loop; task_time_limit only bounds the task itself (the check,
  the claim and a wait for a place).
  test_runner_throughput.py holds the ≥ 100 runs/s requirement.
- A prefork child runs the task through trace_run (below), not Celery's per-task
  tracer: the task stores no result and uses no signals or retries
  (docs/decisions/runner-cpu-per-run.md).
"""

from __future__ import annotations

import logging
import os
import sys
import time
from typing import Any, Final, NoReturn

from celery import Celery, signals
from kombu import Queue

from runner import heap, protocol, tracing
from runner.env import EnvError
from runner.health import HealthServer
from runner.host import current_host, host
from runner.protocol import now_iso
from runner.settings import RunnerSettings, load_settings
from runner.task_limits import BASE_TIME_LIMIT
from runner.worker import close_listener_session, redis_client, start, warm_up

log = logging.getLogger(__name__)

# The hard limit of a task without its own. The gateway sends each task with the limit
# of its graph, which adds the longest its approvals can keep it waiting
# (runner/task_limits.py); the host holds each run to it (runner.host).
TASK_TIME_LIMIT: Final = BASE_TIME_LIMIT
EX_CONFIG: Final = 78  # sysexits.h: configuration error


def _load() -> tuple[RunnerSettings | None, str | None]:
    try:
        return load_settings(), None
    except EnvError as exc:
        return None, str(exc)


SETTINGS, SETTINGS_ERROR = _load()

# No fix-ups: Celery's Django fix-up switches itself on whenever DJANGO_SETTINGS_MODULE
# is in the environment (a shared .env, a process manager's inherited variables) and
# then sets Django up in every pool process and closes its database connections around
# every task. The runner never imports Django: its image has no settings for it, and
# those closes cost every run CPU for nothing.
app = Celery("kionga-runner", fixups=[])
app.conf.update(
    broker_url=SETTINGS.redis_url if SETTINGS else os.environ.get("REDIS_URL"),
    broker_connection_retry_on_startup=True,
    task_serializer="json",
    accept_content=["json"],
    result_serializer="json",
    task_ignore_result=True,  # results travel as events, never through a backend
    task_queues=[Queue(protocol.QUEUE)],
    task_default_queue=protocol.QUEUE,
    task_acks_late=False,
    # Celery 6's default, set now to silence its warning. It only cancels acks_late
    # tasks; ours are acked at start, so a broker blip never stops a running run.
    worker_cancel_long_running_tasks_on_connection_loss=True,
    worker_prefetch_multiplier=1,
    worker_concurrency=SETTINGS.processes if SETTINGS else 1,
    worker_pool="prefork",
    task_time_limit=TASK_TIME_LIMIT,
    worker_disable_rate_limits=True,
    worker_send_task_events=False,
    # No remote control (pidbox), and the Procfile line starts the worker without
    # gossip, mingle and heartbeat events: the runner needs none of them, so its Redis
    # user (docker/redis-users.acl) may touch only its queue, its binding and the run
    # keys.
    worker_enable_remote_control=False,
    # No ack emulation: a task is acked when it starts (above), so kombu's unacked
    # hash, index and their two Redis transactions per task bought only the return of
    # a reserved message after the visibility timeout, which then does nothing.
    broker_transport_options={"ack_emulation": False},
    worker_hijack_root_logger=True,
    timezone="UTC",
)


# Celery's two INFO lines per task (received, succeeded) name only its Celery task ID
# and cost each run ~0.15 ms of formatting and writing in the parent and in the child;
# the runner logs each run by its run ID (runner.worker) instead. Set at import, before
# the worker and its pool read these loggers' levels once.
for _noisy in ("celery.worker.strategy", "celery.app.trace"):
    logging.getLogger(_noisy).setLevel(logging.WARNING)


@app.task(name=protocol.TASK_NAME, ignore_result=True, bind=True)
def execute_run(self: Any, payload: str | dict[str, Any], signature: str) -> None:
    hard, _soft = self.request.timelimit or (None, None)
    start(payload, signature, hard_limit=hard)


def trace_run(task_id: str, args: Any, kwargs: Any, request: dict[str, Any]
              ) -> tuple[None, None, float, str]:
    """execute_run as a prefork child runs it (its `__trace__`, which Celery's
    fast_trace_task calls with the message's decoded arguments): start() and nothing
    else. Celery's own tracer builds a request context and pushes it, looks for
    signal receivers, stores the (ignored) result, takes the return value's repr and
    pops the context around every task: ~a third of the child's CPU per task, for
    nothing a run task uses (no result, no signals, no retries; the hard limit is read
    from the message's request here). The answer tells the parent the task succeeded:
    a task that fails is logged here, its run left to its lease (the reaper), as a
    failed task was."""
    began = time.monotonic()
    try:
        hard, _soft = request.get("timelimit") or (None, None)
        start(*args, **kwargs, hard_limit=hard)
    except Exception:
        log.exception("task %s (run task) failed", task_id)
    return None, None, time.monotonic() - began, "None"


_health: dict[str, HealthServer] = {}


def _ours(instance: Any) -> bool:
    return getattr(instance, "app", None) is app


@signals.celeryd_init.connect
def refuse_bad_configuration(sender: Any = None, instance: Any = None, **_: Any) -> None:
    """Runs in the worker's main process before anything starts."""
    if not _ours(instance):
        return
    settings = SETTINGS
    if settings is None:
        _refuse(str(SETTINGS_ERROR))
    try:
        # Bound now (before the pool forks) so a taken port stops the start loudly.
        _health["server"] = HealthServer(settings.bind_host, settings.port, settings.token,
                                         settings.max_runs,
                                         lambda: redis_client(settings.redis_url))
    except OSError as exc:
        _refuse(f"cannot listen on {settings.bind_host}:{settings.port} "
                f"(KIONGA_DESIGNER_PORT): {exc}")


def _refuse(reason: str) -> NoReturn:
    # stderr, not the log: logging is not set up yet, and this must reach the operator.
    print(f"kionga runner: refusing to start: {reason}", file=sys.stderr, flush=True)
    raise SystemExit(EX_CONFIG)


@signals.worker_process_init.connect
def prepare_pool_process(**_: Any) -> None:
    """In each prefork child: drop the inherited listener, load what runs need."""
    server = _health.pop("server", None)
    if server is not None:
        server.close_inherited()
    warm_up()
    if SETTINGS is not None:
        host(SETTINGS.process_runs, SETTINGS.process_cap)  # its event loop, for its first run
    # After Celery built its tracers for the child (before this signal): ours instead.
    execute_run.__trace__ = trace_run
    heap.freeze()  # a process holding hundreds of runs: runner/heap.py
    heap.space_full_collections()


@signals.worker_process_shutdown.connect
def finish_runs(**_: Any) -> None:
    """In a pool process about to exit (a warm shutdown): its runs end first, as when a
    task was a run and the pool waited for it."""
    running = current_host()
    if running is not None and not running.drain():
        log.warning("exiting with %d runs still in flight", running.in_flight)
    close_listener_session()
    tracing.flush()  # the spans of its last runs (nothing when tracing is off)


@signals.worker_ready.connect
def announce(sender: Any = None, **_: Any) -> None:
    server = _health.get("server")
    if SETTINGS is None or server is None:
        return
    server.start()
    warm_up()  # for the threads/solo pools, which run tasks in this process
    client = redis_client(SETTINGS.redis_url)
    client.hset(protocol.RUNNER_INFO_KEY, mapping={
        "max_runs": SETTINGS.max_runs, "started_at": now_iso(), "pid": os.getpid(),
    })
    log.info("runner ready: max_runs=%d in %d processes, health on %s:%d",
             SETTINGS.max_runs, SETTINGS.processes, SETTINGS.bind_host, server.port)


@signals.worker_shutdown.connect
def stop_health(**_: Any) -> None:
    server = _health.pop("server", None)
    if server is not None:
        server.stop()
