"""RunHost: one event loop per runner process, hosting many runs at once.

A Celery pool process does not spend a task on a run: the task checks and claims the
run (runner.worker.start) and hands it to its process's host, which runs it as a task
of one event loop (a thread of its own) next to the process's other runs. A process
takes its share of the runner's runs (`share`, max_runs ÷ processes) and then some:
a task that finds its process at its share waits up to SHARE_WAIT_SECONDS for one of
its runs to end, busy meanwhile, so Celery's parent gives the next messages to an idle
process; then it runs anyway (the other processes may be at their share too, their
runs waiting on people: Redis's slots cap runs across the runner, never a process).
`cap` (max_runs) is a hard bound all the same. A run that waits (a model's stream, a resource
call, a person) costs memory, not a process or a thread.

Per process, whatever the number of runs, the host keeps:
- the loop's thread;
- a keeper thread that does for every run what each run's own watcher did: it looks
  for cancel requests every CANCEL_POLL_SECONDS (longer with many runs, at most
  MAX_CANCEL_POLL_SECONDS) by reading the count of cancels ever requested
  (protocol.CANCELS_KEY, one key whatever the number of runs), and only when it moved
  (and for runs new since the last look, and at every renewal, in case a count was
  missed) one EXISTS over the runs' cancel keys; one pipelined round trip renews every
  lease (every HEARTBEAT_SECONDS). A poll with no cancel, no new run and no renewal
  is that one GET, whatever the number of runs. A lease found dead stops its run; a
  sink that failed stops its run itself (RunHandle.halt);
- a watchdog thread. The loop beats every BEAT_SECONDS; when one task has held the
  loop for BLOCK_SECONDS without a beat (code that never awaits), the watchdog names
  the run that task belongs to, raises RunBlocked in the loop's thread (delivered at
  the next Python bytecode) and cancels the run: it ends run.failed, reason
  `loop_blocked`, and the others go on. When the loop is still blocked KILL_SECONDS
  after the last beat (code that never returns to Python: a C call), the process exits
  (the hard kill of a wedged process): its runs' leases run out and the gateway's
  reaper ends each with `runner_lost`; Celery replaces the process. Other processes'
  runs never notice.
- the event sinks' writer threads (runner.sink, a few per process).

A run also has a hard time limit (the task's `timelimit`, runner.task_limits): past it,
it is cancelled and ends run.failed, reason `timeout`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import ctypes
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Final

import redis

from runner import protocol
from runner.events import Event
from runner.protocol import TERMINAL_TYPES, ending_event
from runner.redis_tx import command

log = logging.getLogger(__name__)

BEAT_SECONDS: Final = 0.1
# How long one run may hold the loop (one step of its task, without awaiting) before
# the watchdog ends it: what the others may be stalled by, plus one beat.
BLOCK_SECONDS: Final = 2.0
# A loop blocked this long (a C call that does not return) takes its process down.
KILL_SECONDS: Final = 20.0
CANCEL_POLL_SECONDS: Final = 0.05
MAX_CANCEL_POLL_SECONDS: Final = 0.25
# Per run in one round trip: how much longer the cancel poll waits with many runs.
CANCEL_POLL_PER_RUN: Final = 0.0002
EX_SOFTWARE: Final = 70  # sysexits.h
SHARE_WAIT_SECONDS: Final = 1.0
# A draining process waits past its runs' hard limits this long (their sinks' close).
DRAIN_MARGIN_SECONDS: Final = 90.0

LOOP_BLOCKED: Final = "loop_blocked"


class RunBlocked(BaseException):  # noqa: N818 - raised into a hog, not an error of its own
    """Raised in the loop's thread into the code of a run that held the loop too long.

    A BaseException, so a component's `except Exception` does not swallow it."""


@dataclass(eq=False)
class RunHandle:
    """One run as the host knows it."""

    run_id: str
    lease: str
    client: redis.Redis
    hard_limit: float
    # Set by the keeper (cancel requested, lease dead, sink failed) or the host.
    flag: threading.Event = field(default_factory=threading.Event)
    stop: asyncio.Event | None = None
    task: asyncio.Task[str] | None = None
    # The host's stop (set by the host; halt calls it): a function of the handle, not a
    # closure over it, so the handle is no reference cycle and goes with its run.
    stopper: Callable[[RunHandle], None] = lambda _handle: None
    # Why the host ended the run (reason, code, message): its ending says so.
    ending: tuple[str, str, str] | None = None
    finishing: bool = False  # past the engine: a cancel would only cut its close short
    looked: bool = False  # the keeper has read its cancel key at least once

    def halt(self) -> None:
        """Stop the run from any thread (the keeper's stop): what the run's sink calls
        once it failed, so no poll asks every run about its sink."""
        self.stopper(self)

    def end(self, reason: str, code: str, message: str) -> None:
        """On the loop: stop the run; its terminal event becomes run.failed with `reason`."""
        if self.ending is None:
            self.ending = (reason, code, message)
        self.flag.set()
        if self.stop is not None:
            self.stop.set()
        if self.task is not None and not self.finishing:
            self.task.cancel()

    def emit_through(self, sink: Callable[[Event], None]) -> Callable[[Event], None]:
        """The run's emit: its terminal event tells why the host ended the run."""

        def emit(event: Event) -> None:
            if self.ending is not None and event.get("type") in TERMINAL_TYPES:
                event = self.failed_event(int(event.get("seq", 0)), event.get("usage"))
            sink(event)

        return emit

    def failed_event(self, seq: int, usage: Any = None) -> Event:
        reason, code, message = self.ending or ("engine_error", "node_error",
                                                "the runner failed unexpectedly")
        tokens = usage.get("tokens") if isinstance(usage, dict) else 0
        return ending_event("run.failed", seq, reason=reason, code=code, message=message,
                            tokens=tokens if isinstance(tokens, int) else 0)


class Stop(asyncio.Event):
    """The run's cancel event, also set (for the checks between nodes) as soon as the
    keeper's flag is, before the loop has run the keeper's call."""

    def __init__(self, flag: threading.Event) -> None:
        super().__init__()
        self._flag = flag

    def is_set(self) -> bool:
        return super().is_set() or self._flag.is_set()


_RUN: contextvars.ContextVar[RunHandle | None] = contextvars.ContextVar("run", default=None)

RunBody = Callable[[RunHandle], Awaitable[str]]


class RunHost:
    def __init__(self, share: int, cap: int, *, block_seconds: float = BLOCK_SECONDS,
                 kill_seconds: float = KILL_SECONDS) -> None:
        self.share = share
        self.cap = max(cap, share)
        self.block_seconds = block_seconds
        self.kill_seconds = kill_seconds
        self._places = threading.BoundedSemaphore(self.cap)
        self._room = threading.Condition()
        self._runs: dict[str, RunHandle] = {}
        # The keeper's: runs it has not looked at yet, and the Redis clients of the
        # hosted runs (id → client, runs), so an idle poll costs one GET per client,
        # not a pass over every run.
        self._fresh: deque[RunHandle] = deque()
        self._clients: dict[int, tuple[redis.Redis, int]] = {}
        self._clients_lock = threading.Lock()
        # The keeper's: CANCELS_KEY as last read, and which clients it was read on.
        self._cancels_seen: dict[int, Any] = {}
        self._cancels_looked: set[int] = set()
        self._owners: dict[asyncio.Task[Any], RunHandle] = {}
        self.loop = asyncio.new_event_loop()
        self.loop.set_task_factory(self._task_factory)  # type: ignore[arg-type]
        self._beat = time.monotonic()
        started = threading.Event()
        self._thread = threading.Thread(target=self._serve, args=(started,),
                                        name="runner-loop", daemon=True)
        self._thread.start()
        started.wait()
        threading.Thread(target=self._watch, name="runner-watchdog", daemon=True).start()
        threading.Thread(target=self._keep, name="runner-keeper", daemon=True).start()

    @property
    def in_flight(self) -> int:
        return len(self._runs)

    def drain(self, margin: float = DRAIN_MARGIN_SECONDS) -> bool:
        """Wait for the hosted runs to end (a warm shutdown: the pool process is about to
        exit), at most the longest hard time limit among them and `margin`; True when
        none is left."""
        runs = list(self._runs.copy().values())
        if runs:
            log.info("waiting for %d runs to end before the process exits", len(runs))
        longest = max((h.hard_limit for h in runs), default=0.0)
        with self._room:
            return self._room.wait_for(lambda: not self._runs, longest + margin)

    def submit(self, handle: RunHandle, body: RunBody) -> concurrent.futures.Future[str]:
        """Run body(handle) on the loop once the process has a place for it (the calling
        thread waits until then, for its share at most SHARE_WAIT_SECONDS); the future
        holds its outcome."""
        with self._room:
            self._room.wait_for(lambda: len(self._runs) < self.share, SHARE_WAIT_SECONDS)
        self._places.acquire()
        handle.stopper = self._stop
        self._runs[handle.run_id] = handle
        self._count_client(handle.client, 1)
        self._fresh.append(handle)
        try:
            return asyncio.run_coroutine_threadsafe(self._host(handle, body), self.loop)
        except BaseException:
            self._runs.pop(handle.run_id, None)
            self._count_client(handle.client, -1)
            self._places.release()
            raise

    def _count_client(self, client: redis.Redis, change: int) -> None:
        with self._clients_lock:
            _client, runs = self._clients.get(id(client), (client, 0))
            if runs + change > 0:
                self._clients[id(client)] = (client, runs + change)
            else:
                self._clients.pop(id(client), None)

    async def _host(self, handle: RunHandle, body: RunBody) -> str:
        task = asyncio.current_task()
        assert task is not None
        handle.task = task  # type: ignore[assignment]
        handle.stop = Stop(handle.flag)
        if handle.flag.is_set():
            handle.stop.set()
        self._owners[task] = handle
        _RUN.set(handle)  # the run's own tasks inherit it (the task factory reads it)
        # In a context of its own: a cancelled timer stays in the loop's heap until its
        # time, and the run's context (_RUN) would keep the handle alive with it.
        timer = self.loop.call_later(handle.hard_limit, handle.end, "timeout", "timeout",
                                     f"the run outlived the runner's hard time limit "
                                     f"({handle.hard_limit:g} s)", context=contextvars.Context())
        try:
            return await body(handle)
        finally:
            # The task's context holds the handle (_RUN): without this, handle and task
            # would be a reference cycle, freed only by a full collection.
            handle.task = None
            timer.cancel()
            self._owners.pop(task, None)
            self._runs.pop(handle.run_id, None)
            self._count_client(handle.client, -1)
            self._places.release()
            with self._room:
                self._room.notify_all()

    def _task_factory(self, loop: asyncio.AbstractEventLoop, coro: Coroutine[Any, Any, Any],
                      context: contextvars.Context | None = None) -> asyncio.Task[Any]:
        task: asyncio.Task[Any] = asyncio.Task(coro, loop=loop, context=context)
        handle = context.get(_RUN) if context is not None else _RUN.get()
        if handle is not None:
            self._owners[task] = handle
            task.add_done_callback(self._forget)
        return task

    def _forget(self, task: asyncio.Task[Any]) -> None:
        self._owners.pop(task, None)

    def _serve(self, started: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._beating)
        self.loop.call_soon(started.set)
        self.loop.run_forever()

    def _beating(self) -> None:
        self._beat = time.monotonic()
        self.loop.call_later(BEAT_SECONDS, self._beating)

    # The watchdog -------------------------------------------------------------------

    def _watch(self) -> None:
        holder: asyncio.Task[Any] | None = None
        held_since = time.monotonic()
        raised_at = 0.0
        while True:
            time.sleep(BEAT_SECONDS)
            now = time.monotonic()
            late = now - self._beat
            task = asyncio.current_task(self.loop)
            if task is not holder or late < BEAT_SECONDS * 2:
                holder, held_since = task, now  # the loop moved on since the last look
            if late >= self.kill_seconds:
                self._wedged(late, task)
            if (task is None or late < self.block_seconds
                    or now - held_since < self.block_seconds - BEAT_SECONDS * 2
                    or now - raised_at < self.block_seconds):
                continue
            handle = self._owners.get(task)
            if handle is None:
                continue
            raised_at = now
            self._blocked(handle, late)

    def _blocked(self, handle: RunHandle, late: float) -> None:
        message = (f"the run held the runner's event loop for {late:.1f} s without "
                   f"waiting (more than {self.block_seconds:g} s): it was stopped so "
                   "the runner's other runs go on")
        log.error("run %s: held the event loop for %.1f s; ending it (%s)", handle.run_id,
                  late, LOOP_BLOCKED)
        if handle.ending is None:  # before the raise: the run's except reads it
            handle.ending = (LOOP_BLOCKED, "timeout", message)
        handle.flag.set()
        ident = self._thread.ident
        if ident is not None:
            ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(ident),
                                                       ctypes.py_object(RunBlocked))
        self.loop.call_soon_threadsafe(handle.end, LOOP_BLOCKED, "timeout", message)

    def _wedged(self, late: float, task: asyncio.Task[Any] | None) -> None:
        handle = self._owners.get(task) if task is not None else None
        log.critical("the event loop has been blocked for %.0f s (run %s) and does not "
                     "come back: exiting; this process's %d runs end runner_lost",
                     late, handle.run_id if handle else "unknown", len(self._runs))
        logging.shutdown()
        os._exit(EX_SOFTWARE)

    # The keeper ---------------------------------------------------------------------

    def _keep(self) -> None:
        renew_at = time.monotonic() + protocol.HEARTBEAT_SECONDS
        unreachable = False
        while True:
            time.sleep(min(MAX_CANCEL_POLL_SECONDS,
                           max(CANCEL_POLL_SECONDS, len(self._runs) * CANCEL_POLL_PER_RUN)))
            renew = time.monotonic() >= renew_at
            if renew:
                renew_at = time.monotonic() + protocol.HEARTBEAT_SECONDS
            fresh = _drain(self._fresh)
            with self._clients_lock:
                clients = [client for client, _runs in self._clients.values()]
            try:
                for client in clients:
                    self._check(client, fresh, renew=renew)
                unreachable = False
            except redis.RedisError as exc:
                # The runs not looked at yet are asked at the next poll that reaches
                # Redis; a renewal not done is done then too.
                self._fresh.extendleft(reversed([h for h in fresh if not h.looked]))
                if renew:
                    renew_at = time.monotonic()
                if not unreachable:
                    log.warning("Redis unreachable (%s); %d runs go on",
                                type(exc).__name__, len(self._runs))
                unreachable = True

    def _cancels_moved(self, client: redis.Redis) -> bool:
        """Whether a cancel was requested since the last look (the count moved, or it
        cannot be read: then every run is asked)."""
        try:
            # On the keeper's own connection (runner.redis_tx): a poll every 50 ms.
            seen = command(client, "GET", protocol.CANCELS_KEY)
        except redis.ResponseError:  # e.g. a Redis user without it: ask every time
            return True
        moved = seen != self._cancels_seen.get(id(client), seen)
        self._cancels_seen[id(client)] = seen
        # A client's first look asks every run: nothing was seen before it.
        return moved or id(client) not in self._cancels_looked

    def _check(self, client: redis.Redis, fresh: list[RunHandle], *, renew: bool) -> None:
        """One client's runs: a look for cancels (every run when the count moved, at a
        renewal or on the client's first look; else only the runs new since the last
        look) and, at a renewal, every lease renewed."""
        full = self._cancels_moved(client) or renew
        self._cancels_looked.add(id(client))
        # Every run's lease until its end (a stopping run still writes its ending);
        # a dead lease stays dead (PEXPIRE does not create a key).
        runs = ([h for h in self._runs.copy().values() if h.client is client] if full
                else [h for h in fresh if h.client is client])
        asking = [h for h in runs if not h.flag.is_set()]
        # One EXISTS over every key answers "none" in one reply (the usual case); which
        # runs were cancelled is asked only when some were.
        if asking and client.exists(*(protocol.cancel_key(h.run_id) for h in asking)):
            pipe = client.pipeline(transaction=False)
            for handle in asking:
                pipe.exists(protocol.cancel_key(handle.run_id))
            for handle, asked in zip(asking, pipe.execute(), strict=True):
                if asked:
                    log.info("run %s: cancel requested", handle.run_id)
                    self._stop(handle)
        for handle in asking:
            handle.looked = True
        leased = [h for h in runs if h.lease] if renew else []
        if not leased:
            return
        pipe = client.pipeline(transaction=False)
        for handle in leased:
            pipe.pexpire(protocol.lease_key(handle.lease),
                         int(protocol.RUNNING_LEASE_SECONDS * 1000))
        for handle, alive in zip(leased, pipe.execute(), strict=True):
            if not alive and not handle.flag.is_set():
                log.warning("run %s: its slot lease ran out; stopping the run", handle.run_id)
            if not alive:
                self._stop(handle)

    def _stop(self, handle: RunHandle) -> None:
        handle.flag.set()
        stop = handle.stop
        if stop is not None:
            self.loop.call_soon_threadsafe(stop.set)


def _drain(fresh: deque[RunHandle]) -> list[RunHandle]:
    """What the deque holds now (other threads append meanwhile: popleft is atomic)."""
    drained: list[RunHandle] = []
    while True:
        try:
            drained.append(fresh.popleft())
        except IndexError:
            return drained


_hosts: dict[str, RunHost] = {}
_lock = threading.Lock()


def _after_fork() -> None:
    global _lock
    _lock = threading.Lock()
    _hosts.clear()  # the parent's loop thread does not exist in the child


os.register_at_fork(after_in_child=_after_fork)


def current_host() -> RunHost | None:
    """This process's host, if it made one."""
    return _hosts.get("host")


def host(share: int, cap: int) -> RunHost:
    """This process's host (made on first use: `share` runs, at most `cap`)."""
    with _lock:
        current = _hosts.get("host")
        if current is None:
            current = _hosts["host"] = RunHost(share, cap)
        return current
