"""EventSink: delivers one run's events to Redis, in order, surviving a Redis restart.

Every event goes to the run's own stream (live SSE, deltas included); every stored
event (all but node.delta) also goes to the shared ingest stream the gateway drains
into PostgreSQL, with the MAC of the run's event key (from the signed task) so the
gateway stores only what the run's runner sent; the terminal event also sets the
run stream's TTL. One MULTI/EXEC
round trip carries everything queued so far (one event when Redis keeps up), so a
batch is applied whole or not at all and a retry never leaves half of one behind.
(A reply lost after EXEC applied can still repeat a batch on retry: readers dedupe
on seq, and the gateway stores each run + seq once.)

The engine calls the sink synchronously, so `__call__` only appends to a buffer; a
writer thread drains it. When Redis is unreachable the writer keeps the buffer (in
order, never reordered) and retries with backoff for up to `retry_seconds`; the run
goes on meanwhile. Only if Redis stays away longer does it give up (`failed`): the
slot lease has run out by then and the gateway's reaper ends the run anyway.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from typing import Final

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from runner.events import TERMINAL_TYPES, Event
from runner.protocol import (
    INGEST_STREAM,
    STREAM_MAXLEN,
    STREAM_TTL_SECONDS,
    encode_event,
    ingest_fields,
    run_stream,
)

log = logging.getLogger(__name__)

# Live-only deltas are best effort: past this backlog (Redis away, a model streaming
# fast) new deltas are dropped; stored events are always kept.
MAX_BACKLOG: Final = 20_000
# Bounds one MULTI/EXEC after a backlog built up.
MAX_BATCH: Final = 500
RETRY_SECONDS: Final = 60.0
# Errors after which the same batch may be sent again: the connection failed
# (ConnectionError covers BusyLoadingError while a restarted Redis loads its data)
# or the server is not writable yet.
RETRYABLE: Final = (redis.ConnectionError, redis.TimeoutError, redis.ReadOnlyError)


class EventSink:
    def __init__(self, client: redis.Redis, run_id: str, *, event_key: bytes,
                 retry_seconds: float = RETRY_SECONDS) -> None:
        self._redis = client
        self._run_id = run_id
        self._event_key = event_key  # the run's, from its task: authenticates its events
        self._stream = run_stream(run_id)
        self._retry_seconds = retry_seconds
        self._buffer: deque[Event] = deque()
        self._lock = threading.Condition()
        self._closing = False
        self._busy = False  # the writer holds a batch taken from the buffer
        self.last_seq = -1  # seq of the last stored event handed to the sink
        self.terminal_seen = False
        self.failed = False  # gave up: Redis stayed unreachable too long
        self.dropped = 0
        self._writer = threading.Thread(target=self._run, name=f"sink-{run_id}", daemon=True)
        self._writer.start()

    def __call__(self, event: Event) -> None:
        """The engine's emit: never blocks on Redis and never raises."""
        with self._lock:
            if self.terminal_seen:
                return  # exactly one terminal event, last
            is_delta = event.get("type") == "node.delta"
            if self.failed or (is_delta and len(self._buffer) >= MAX_BACKLOG):
                self.dropped += 1
                return
            if not is_delta:
                self.last_seq = max(self.last_seq, int(event.get("seq", -1)))
            self.terminal_seen = event.get("type") in TERMINAL_TYPES
            self._buffer.append(event)
            self._lock.notify()

    def close(self, timeout: float | None = None) -> bool:
        """Flush what is buffered, stop the writer; True when everything reached Redis."""
        with self._lock:
            self._closing = True
            self._lock.notify()
        self._writer.join(timeout)
        with self._lock:
            return not self.failed and not self._buffer and not self._busy and not self.dropped

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._buffer and not self._closing:
                    self._lock.wait()
                if not self._buffer:
                    return  # closing and drained
                count = min(len(self._buffer), MAX_BATCH)
                batch = [self._buffer.popleft() for _ in range(count)]
                self._busy = True
            delivered = self._deliver(batch)
            with self._lock:
                self._busy = False
                if not delivered:
                    self._give_up(len(batch))

    def _deliver(self, batch: list[Event]) -> bool:
        deadline = time.monotonic() + self._retry_seconds
        delay = 0.05
        while True:
            try:
                self._write(batch)
                return True
            except RETRYABLE as exc:
                if time.monotonic() + delay > deadline:
                    log.error("run %s: Redis unreachable for %g s, giving up on its events "
                              "(%s)", self._run_id, self._retry_seconds, type(exc).__name__)
                    return False
                log.warning("run %s: Redis unreachable (%s), retrying in %.2f s",
                            self._run_id, type(exc).__name__, delay)
                time.sleep(delay)
                delay = min(delay * 2, 2.0)
            except redis.RedisError:
                # Not a connectivity problem (e.g. a wrong type at the key): retrying
                # cannot help, and the details may name the payload, so log the type.
                log.exception("run %s: Redis refused the events", self._run_id)
                return False

    def _write(self, batch: list[Event]) -> None:
        pipe = self._redis.pipeline(transaction=True)
        for event in batch:
            data = encode_event(event).encode("utf-8")
            pipe.xadd(self._stream, {"e": data}, maxlen=STREAM_MAXLEN, approximate=True)
            if event.get("type") != "node.delta":
                pipe.xadd(INGEST_STREAM, ingest_fields(self._event_key, self._run_id, data))
            if event.get("type") in TERMINAL_TYPES:
                pipe.expire(self._stream, STREAM_TTL_SECONDS)
        pipe.execute()

    def _give_up(self, lost: int) -> None:
        # Caller holds the lock. Later events would only wait as long again.
        self.failed = True
        self.dropped += lost + len(self._buffer)
        self._buffer.clear()


def sink_client(redis_url: str) -> redis.Redis:
    """A client for the sink and the worker: bounded waits, and no retries of its own.

    redis-py would otherwise re-send commands itself; our loops decide what is safe
    to repeat (a MULTI/EXEC batch) and for how long.
    """
    return redis.Redis.from_url(redis_url, socket_timeout=5.0, socket_connect_timeout=2.0,
                                retry=Retry(NoBackoff(), 0), health_check_interval=15)

