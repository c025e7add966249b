"""EventSink: delivers one run's events to Redis, in order, surviving a Redis restart.

Every event goes to the run's own stream (live SSE, deltas included), bounded in bytes
(runner/live.py: the oldest entries go first; a project over its live budget keeps
less and no deltas); every stored event (all but node.delta) also goes to the shared
ingest stream the gateway drains into PostgreSQL; both with the MAC of the run's event
key (from the signed task) so the gateway stores and shows only what the run's runner
sent. Every write sets the run stream's TTL; the terminal event also frees the run's
slot. One MULTI/EXEC round trip carries everything queued so far (one event when Redis
keeps up), so a batch is applied whole or not at all and a retry never leaves half of
one behind. (A reply lost after EXEC applied is noticed on retry, from the stream's newest
entry, and the batch is not sent twice.)

The engine calls the sink synchronously, so `__call__` only appends to a buffer; the
process's few writer threads (WRITERS, shared by all its runs' sinks) drain the
buffers. A writer takes the sinks with work now (up to TOGETHER) and sends the next
batch of each, a MULTI/EXEC per sink, in one round trip on a connection of its own
(runner.redis_tx): with many runs streaming, one write and one read carry many runs'
events. A sink is in one writer's hands at a time, so it is never written by two
threads at once and its events stay in order; a batch that does not pass in the shared
round trip is sent again alone, with the retries below. When Redis is unreachable
(or full: it refuses writes with OOM until memory is freed) the writer keeps the
buffer (in order, never reordered) and retries with backoff for up to
`retry_seconds`; the run goes on meanwhile. Only if Redis stays away longer does it
give up (`failed`): the slot lease has run out by then and the gateway's reaper ends
the run anyway.

Any other failure of a batch (an event that does not encode, Redis refusing a
command) cannot pass on retry, but Redis is there: the sink drops the run's other
events and writes one true ending instead, run.failed with reason events_lost (seq
right after the last event written), so the run is not mistaken for a lost runner.
Once the sink failed either way, `__call__` raises SinkFailed for every further
event but the terminal one, and the engine stops the graph: no side effect happens
unseen.
"""

from __future__ import annotations

import asyncio
import logging
import os
import queue
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Final

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from runner.events import EVENTS_LOST, Event
from runner.live import Append, LiveStream
from runner.protocol import (
    INGEST_STREAM,
    LIVE_BYTES_LUA,
    LIVE_EVENT_FIELD,
    LIVE_STORED_ONLY_FIELD,
    STREAM_TTL_SECONDS,
    TERMINAL_TYPES,
    encode_event,
    ending_event,
    ingest_fields,
    lease_key,
    live_fields,
    record_fields,
    run_stream,
)
from runner.records import Record
from runner.redis_tx import Command, transaction, transactions
from runner.retry import RetryPolicy, retrying

log = logging.getLogger(__name__)

# Live-only deltas are best effort: past this backlog (Redis away, a model streaming
# fast) new deltas are dropped; stored events are always kept.
MAX_BACKLOG: Final = 20_000
# Bounds one MULTI/EXEC after a backlog built up.
MAX_BATCH: Final = 500
RETRY_SECONDS: Final = 60.0
# Errors after which the same batch may be sent again: the connection failed
# (ConnectionError covers BusyLoadingError while a restarted Redis loads its data),
# the server is not writable yet, or it is full (a MULTI refused with OOM applies
# nothing; memory comes back as the gateway stores and trims).
RETRYABLE: Final = (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError,
                    redis.OutOfMemoryError)
# How the sink and the worker wait for Redis to come back.
REDIS_RETRY: Final = RetryPolicy(deadline=RETRY_SECONDS, retry_on=RETRYABLE)
# Writer threads per process, whatever its number of runs: each MULTI/EXEC waits on
# Redis without the GIL, so a few keep up with one event loop's runs.
WRITERS: Final = 4
# Sinks a writer serves in one turn (one round trip), when that many have work.
TOGETHER: Final = 16


class SinkFailed(RuntimeError):
    """The sink no longer writes this run's events: the run must stop."""


class EventSink:
    def __init__(self, client: redis.Redis, run_id: str, *, event_key: bytes, lease: str = "",
                 project_id: int | None = None, retry_seconds: float = RETRY_SECONDS,
                 on_failed: Callable[[], None] | None = None) -> None:
        self._redis = client
        self._run_id = run_id
        self._event_key = event_key  # the run's, from its task: authenticates its events
        self._lease = lease  # the run's lease token, from its task ("": no slot to free)
        self._stream = run_stream(run_id)
        self.live = LiveStream(project_id)  # touched by the writer thread only
        self._retry = replace(REDIS_RETRY, deadline=retry_seconds)
        self._buffer: deque[Event] = deque()
        self._lock = threading.Lock()
        self._closing = False
        self._busy = False  # the writer holds a batch taken from the buffer
        self.last_seq = -1  # seq of the last stored event handed to the sink
        self.terminal_seen = False
        self.slot_freed = False  # the terminal event was written, and the slot freed with it
        self.failed = False  # gave up: nothing more reaches Redis
        # A batch failed for another reason than connectivity: only the ending is
        # still written, as run.failed with this message.
        self.error: str | None = None
        self._written_seq = -1  # seq of the last stored event in Redis
        self.dropped = 0
        # Handed to the process's writers (on their queue or in one's hands).
        self._scheduled = False
        self._done = threading.Event()  # closing, and every batch written or given up
        self._on_done: list[Callable[[], None]] = []
        # Called (in a writer thread) once the sink failed either way: the run must
        # stop even while it emits nothing (a model's wait), not at its next event.
        self._on_failed = on_failed

    def __call__(self, event: Event) -> None:
        """The engine's emit: never blocks on Redis; raises SinkFailed once the sink
        failed (except for the terminal event, which ends the run either way)."""
        with self._lock:
            if self.terminal_seen:
                return  # exactly one terminal event, last
            is_delta = event.get("type") == "node.delta"
            is_terminal = event.get("type") in TERMINAL_TYPES
            if self.failed or (self.error is not None and not is_terminal):
                self.dropped += 1
                if is_terminal:
                    return
                raise SinkFailed(self.error or "the run's events cannot reach Redis")
            if is_delta and len(self._buffer) >= MAX_BACKLOG:
                self.dropped += 1
                return
            if not is_delta:
                self.last_seq = max(self.last_seq, int(event.get("seq", -1)))
            self.terminal_seen = is_terminal
            self._buffer.append(event if self.error is None else self._ending(event))
            self._schedule()

    def record(self, record: Record) -> None:
        """The engine's record hook: a node record (runner.records) for the ingest stream
        only, in order with the events. Best effort, as deltas: dropped past the backlog
        or once the sink failed or the run ended."""
        with self._lock:
            if (self.terminal_seen or self.failed or self.error is not None
                    or len(self._buffer) >= MAX_BACKLOG):
                return
            self._buffer.append({_RECORD: record})
            self._schedule()

    def close(self, timeout: float | None = None) -> bool:
        """Flush what is buffered, then stop; True when everything reached Redis."""
        self._request_close()
        self._done.wait(timeout)
        return self._delivered()

    async def aclose(self, timeout: float) -> bool:
        """close() for a run on an event loop: waits without holding the loop."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[None] = loop.create_future()

        def settle() -> None:
            if not done.done():
                done.set_result(None)

        def wake() -> None:
            loop.call_soon_threadsafe(settle)

        with self._lock:
            self._on_done.append(wake)
        self._request_close()
        if self._done.is_set():
            return self._delivered()
        try:
            await asyncio.wait_for(done, timeout)
        except TimeoutError:
            pass
        return self._delivered()

    def _request_close(self) -> None:
        with self._lock:
            self._closing = True
            self._schedule()

    def _delivered(self) -> bool:
        with self._lock:
            return (not self.failed and self.error is None and not self._buffer
                    and not self._busy and not self.dropped)

    def _schedule(self) -> None:
        """Caller holds the lock: hand the sink to the writers unless they have it."""
        if not self._scheduled and not self._done.is_set():
            self._scheduled = True
            _writers().put(self)

    def _serve(self) -> None:
        """A writer's turn with this sink alone (see _serve_together)."""
        _serve_together([self])

    def _take(self) -> list[Event] | None:
        """The next batch for a writer, or None: nothing is buffered and the turn ends."""
        with self._lock:
            if not self._buffer:
                self._scheduled = False
                if self._closing:
                    self._finish()
                return None
            count = min(len(self._buffer), MAX_BATCH)
            batch = [self._buffer.popleft() for _ in range(count)]
            self._busy = True
            return batch

    def _settle(self, batch: list[Event], problem: str | None) -> None:
        """After a batch's delivery: what it changed, and back on the queue if more."""
        with self._lock:
            self._busy = False
            if problem is None:
                self._written_seq = max([self._written_seq, *_stored_seqs(batch)])
            elif problem == _UNREACHABLE or self.error is not None:
                self._give_up(len(batch))  # unreachable, or even the ending failed
            else:
                self._fail(batch, problem)
            if self._buffer or self._closing:
                _writers().put(self)  # still scheduled: the same sink, later
            else:
                self._scheduled = False
        if problem is not None and self._on_failed is not None:
            self._on_failed()

    def _finish(self) -> None:
        """Caller holds the lock: closing and drained."""
        self._done.set()
        callbacks, self._on_done = self._on_done, []
        for callback in callbacks:
            try:
                callback()
            except RuntimeError:  # the waiting loop is closed: nobody waits any more
                pass

    def _prepared(self, batch: list[Event]) -> _Writes | str:
        """The batch's writes, prepared once (a retry sends the same entries), or what
        went wrong."""
        try:
            return self._prepare(batch)
        except Exception as exc:
            return self._problem(exc)

    def _deliver(self, writes: _Writes) -> str | None:
        """None when the batch is in Redis (retried while Redis is unreachable), else
        what went wrong."""
        try:
            retrying(lambda: self._write(writes), self._retry,
                     f"run {self._run_id}: Redis unreachable")
            return None
        except RETRYABLE as exc:
            log.error("run %s: Redis unreachable for %g s, giving up on its events (%s)",
                      self._run_id, self._retry.deadline, type(exc).__name__)
            return _UNREACHABLE
        except Exception as exc:
            return self._problem(exc)

    def _problem(self, exc: Exception) -> str:
        # Not connectivity (an event that does not encode, a wrong type at the key):
        # retrying cannot help. The details may name the payload, so the message
        # names the type only.
        log.error("run %s: its events could not be written", self._run_id, exc_info=exc)
        return f"the runner could not write the run's events ({type(exc).__name__})"

    def _prepare(self, batch: list[Event]) -> _Writes:
        writes = _Writes(trim=self.live.trim())
        for event in batch:
            if _RECORD in event:
                record = encode_event(event[_RECORD]).encode("utf-8")
                writes.events.append(_Write(None, None, False, record))
                continue
            kind, data = str(event.get("type")), encode_event(event).encode("utf-8")
            live = self.live.append(kind, int(event.get("seq", -1)), data)
            writes.events.append(_Write(live, data if kind != "node.delta" else None,
                                        kind in TERMINAL_TYPES))
        writes.account = self.live.account()
        return writes

    def _write(self, writes: _Writes) -> None:
        if writes.sent and self._applied(writes):
            # The EXEC applied and only its reply was lost. Sending it again would add
            # its live entries twice, and their exact MAXLEN would then push as many
            # of the run's oldest entries out of the stream.
            self.slot_freed = self.slot_freed or any(w.terminal for w in writes.events)
            return
        commands = self._commands(writes)
        writes.sent = True
        # One MULTI/EXEC on this writer thread's own connection (runner.redis_tx).
        self._written(writes, transaction(self._redis, commands))

    def _commands(self, writes: _Writes) -> list[Command]:
        """The batch's MULTI/EXEC body."""
        commands: list[Command] = []
        if writes.trim is not None:
            commands.append(("XTRIM", self._stream, "MAXLEN", writes.trim))
        for write in writes.events:
            if write.live is not None:
                commands.append(_xadd(self._stream, live_fields(
                    self._event_key, self._run_id, write.live.data,
                    stored_only=write.live.stored_only), maxlen=write.live.keep))
            if write.stored is not None:
                commands.append(_xadd(INGEST_STREAM, ingest_fields(
                    self._event_key, self._run_id, write.stored)))
            if write.record is not None:
                commands.append(_xadd(INGEST_STREAM, record_fields(
                    self._event_key, self._run_id, write.record)))
            if write.terminal:
                # The run's slot is freed with its ending, atomically: whoever sees the
                # end can start the next run at once (no 429 in between), and the
                # gateway never sees the slot free without the ending in Redis.
                if self._lease:
                    commands.append(("DEL", lease_key(self._lease)))
        # Every write, not only the ending: a stream whose run died unseen still expires.
        commands.append(("EXPIRE", self._stream, STREAM_TTL_SECONDS))
        if writes.account is not None:
            key, held = writes.account
            commands.append(("EVAL", LIVE_BYTES_LUA, 1, key, self._run_id, held,
                             STREAM_TTL_SECONDS))
        return commands

    def _written(self, writes: _Writes, answers: list[Any]) -> None:
        """The batch is in Redis (`answers`: its EXEC's replies)."""
        if writes.account is not None:
            self.live.settle(int(answers[-1]))
        self.slot_freed = self.slot_freed or any(w.terminal for w in writes.events)

    def _applied(self, writes: _Writes) -> bool:
        """Whether a batch sent before is in Redis: the sink is its stream's only
        writer and a batch applies whole, so it is when the stream's newest entry is the
        batch's last live entry (every entry differs: each has its own seq or delta
        index and time). A batch with no live entry is sent again (a repeated ingest
        entry is stored once)."""
        last = next((w.live for w in reversed(writes.events) if w.live is not None), None)
        if last is None:
            return False
        newest: Any = self._redis.xrevrange(self._stream, count=1)
        if not newest:
            return False
        _id, fields = newest[0]
        stored = fields.get(LIVE_STORED_ONLY_FIELD if last.stored_only else LIVE_EVENT_FIELD)
        return bool(stored == last.data)

    def _give_up(self, lost: int) -> None:
        # Caller holds the lock. Later events would only wait as long again.
        self.failed = True
        self.dropped += lost + len(self._buffer)
        self._buffer.clear()

    def _fail(self, batch: list[Event], error: str) -> None:
        """Caller holds the lock: drop what is left but the ending, written as run.failed."""
        self.error = error
        queued = [*batch, *self._buffer]
        terminal = next((e for e in queued if e.get("type") in TERMINAL_TYPES), None)
        self.dropped += sum(_RECORD not in e for e in queued) - (terminal is not None)
        self._buffer.clear()
        if terminal is not None:
            self._buffer.append(self._ending(terminal))

    def _ending(self, terminal: Event) -> Event:
        """The run's true ending after a failed batch; the engine's usage is kept."""
        usage = terminal.get("usage")
        if not (isinstance(usage, dict) and isinstance(usage.get("tokens"), int)):
            usage = {"tokens": 0}
        return ending_event("run.failed", self._written_seq + 1, reason=EVENTS_LOST,
                            code="node_error", message=f"{self.error}; the run was stopped",
                            tokens=usage["tokens"])


def _xadd(stream: str, fields: dict[Any, Any], *, maxlen: int | None = None) -> Command:
    """XADD as redis-py sends it (an exact MAXLEN when given, an ID Redis picks)."""
    bound: tuple[Any, ...] = ("MAXLEN", maxlen) if maxlen is not None else ()
    pairs = [part for pair in fields.items() for part in pair]
    return ("XADD", stream, *bound, "*", *pairs)


_UNREACHABLE: Final = "unreachable"
# A node record in the buffer ({_RECORD: record}: no type, no seq; never live).
_RECORD: Final = "_record"


@dataclass(frozen=True)
class _Write:
    live: Append | None  # the live entry (None: left out of the live stream)
    stored: bytes | None  # the encoded event for the ingest stream (None: a delta)
    terminal: bool
    record: bytes | None = None  # an encoded node record for the ingest stream


@dataclass
class _Writes:
    """One batch as the MULTI sends it, prepared once so a retry sends the same."""

    trim: int | None
    events: list[_Write] = field(default_factory=list)
    account: tuple[str, int] | None = None
    sent: bool = False  # a MULTI of it went out (its reply may have been lost)


_writer_state: dict[str, Any] = {}
_writer_lock = threading.Lock()


def _after_fork() -> None:
    global _writer_lock
    _writer_lock = threading.Lock()
    _writer_state.clear()  # the parent's writer threads do not exist in a child


os.register_at_fork(after_in_child=_after_fork)


def _writers() -> queue.SimpleQueue[EventSink]:
    """This process's queue of sinks with work, and its WRITERS threads (started once)."""
    jobs: queue.SimpleQueue[EventSink] | None = _writer_state.get("jobs")
    if jobs is not None:
        return jobs
    with _writer_lock:
        if "jobs" not in _writer_state:
            fresh: queue.SimpleQueue[EventSink] = queue.SimpleQueue()
            for number in range(WRITERS):
                threading.Thread(target=_write_forever, args=(fresh,),
                                 name=f"sink-writer-{number}", daemon=True).start()
            _writer_state["jobs"] = fresh
        found: queue.SimpleQueue[EventSink] = _writer_state["jobs"]
        return found


def _write_forever(jobs: queue.SimpleQueue[EventSink]) -> None:
    while True:
        turn = [jobs.get()]
        while len(turn) < TOGETHER:  # the other sinks with work now: one round trip
            try:
                turn.append(jobs.get_nowait())
            except queue.Empty:
                break
        try:
            _serve_together(turn)
        except BaseException:  # a bug must not kill the writer (nor lose the others)
            log.exception("a sink writer's turn failed")


def _serve_together(sinks: list[EventSink]) -> None:
    """A writer's turn with a few sinks: the next batch of each, all their MULTI/EXECs
    in one round trip per Redis client (runner.redis_tx.transactions); a batch that did
    not pass there (the connection failed, Redis refused it while queued: it may pass
    later) is sent again alone, with its retries and its check for a reply lost after
    the EXEC applied. A sink is in one writer's hands at a time (it is on the queue
    once), so each run's batches still go in order."""
    taken: list[tuple[EventSink, list[Event], _Writes | str]] = []
    for sink in sinks:
        batch = sink._take()
        if batch is not None:
            taken.append((sink, batch, sink._prepared(batch)))
    problems: dict[int, str | None] = {}
    by_client: dict[int, list[tuple[EventSink, _Writes]]] = {}
    for sink, _batch, writes in taken:
        if isinstance(writes, str):
            problems[id(sink)] = writes
        else:
            by_client.setdefault(id(sink._redis), []).append((sink, writes))
    for group in by_client.values():
        if len(group) == 1:
            sink, writes = group[0]
            problems[id(sink)] = sink._deliver(writes)
            continue
        outcomes: list[list[Any] | redis.ResponseError | None]
        try:
            bodies = [sink._commands(writes) for sink, writes in group]
            for _sink, writes in group:
                writes.sent = True
            outcomes = list(transactions(group[0][0]._redis, bodies))
        except Exception:
            outcomes = [None] * len(group)  # each alone below, with its retries
        for (sink, writes), outcome in zip(group, outcomes, strict=True):
            if isinstance(outcome, list):
                sink._written(writes, outcome)
                problems[id(sink)] = None
            elif outcome is None or isinstance(outcome, RETRYABLE):
                problems[id(sink)] = sink._deliver(writes)
            else:  # an error inside its EXEC: as when it was sent alone
                problems[id(sink)] = sink._problem(outcome)
    for sink, batch, _writes in taken:
        sink._settle(batch, problems[id(sink)])


def _stored_seqs(batch: list[Event]) -> list[int]:
    return [int(e.get("seq", -1)) for e in batch
            if e.get("type") != "node.delta" and _RECORD not in e]


def sink_client(redis_url: str) -> redis.Redis:
    """A client for the sink and the worker: bounded waits, and no retries of its own.

    redis-py would otherwise re-send commands itself; our loops decide what is safe
    to repeat (a MULTI/EXEC batch) and for how long.
    """
    return redis.Redis.from_url(redis_url, socket_timeout=5.0, socket_connect_timeout=2.0,
                                retry=Retry(NoBackoff(), 0), health_check_interval=15)

