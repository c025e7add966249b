"""`manage.py run_events`: event ingester and runner-lost reaper (Procfile `events`)."""

from __future__ import annotations

import logging
import signal
import time
from types import FrameType
from typing import Any, Final

import redis
from django.core.management.base import BaseCommand, CommandParser
from django.db import InterfaceError, OperationalError, close_old_connections

from kionga import database
from kionga.redis_client import sync_redis
from runner import heap
from runs import ingest, ingest_stream, reaper

log = logging.getLogger(__name__)

# After a failure the loop waits FIRST_WAIT_SECONDS, doubling with each failure in a
# row up to MAX_WAIT_SECONDS: a Redis or database that comes back is used again within
# that, and one that stays away is not hammered.
FIRST_WAIT_SECONDS: Final = 0.5
MAX_WAIT_SECONDS: Final = 8.0


class Backoff:
    """Waits that double with each failure in a row, capped; a success starts over."""

    def __init__(self) -> None:
        self.failures = 0

    def next_wait(self) -> float:
        self.failures += 1
        return min(MAX_WAIT_SECONDS, FIRST_WAIT_SECONDS * 2 ** (self.failures - 1))

    def reset(self) -> None:
        self.failures = 0


class Command(BaseCommand):
    help = "Store run events from Redis in the database and end runs whose runner is gone."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--reap-every", type=float, default=1.0)

    def handle(self, *args: Any, **options: Any) -> None:
        self.stopping = False
        signal.signal(signal.SIGTERM, self._stop)
        signal.signal(signal.SIGINT, self._stop)
        consumer = ingest_stream.consumer_name()
        next_reap = 0.0
        client = sync_redis()
        ingest_stream.warn_if_redis_evicts(client)
        needs_group = True
        # At start (and after losing Redis or the database) every pending entry is
        # taken over first: a consumer that died a moment ago left its entries
        # there, and they come before anything newer of their runs.
        needs_claim = True
        redis_backoff, outage = Backoff(), Outage()
        # What start-up made (Django, every app) lives as long as the process: out of
        # the collector's sight, so that a full collection no longer walks it and holds
        # up storing events for 100 ms or more (runner/heap.py).
        heap.freeze()
        while not self.stopping:
            try:
                if needs_group:
                    ingest_stream.ensure_group(client)
                    needs_group = False
                if needs_claim:
                    ingest.drain_claimed(client, consumer, min_idle_ms=0)
                    needs_claim = False
                next_reap = self._loop_once(client, consumer, next_reap, options["reap_every"])
                redis_backoff.reset()
                outage.ended()
            except redis.RedisError as exc:
                # Whatever Redis answers (restarting, loading, full, refusing a command)
                # the process stays: stored events are safe in PostgreSQL and pending
                # entries stay pending. A Redis without persistence comes back without
                # our group: recreate it, and take over the pending entries again.
                needs_group = needs_claim = True
                if isinstance(exc, redis.ResponseError) and "NOGROUP" in str(exc):
                    log.warning("the ingest stream lost its consumer group; recreating it")
                    continue
                wait = redis_backoff.next_wait()
                log.error("Redis failed (%s: %s): run events are not being stored; "
                          "retrying in %.1f s", type(exc).__name__, exc, wait)
                self._sleep(wait)
            except (OperationalError, InterfaceError) as exc:
                # The database is away: the batch stays pending (ours) until it is back.
                needs_claim = True
                self._sleep(outage.failed(exc))
            finally:
                close_old_connections()

    def _loop_once(self, client: redis.Redis, consumer: str, next_reap: float,
                   every: float) -> float:
        if time.monotonic() < next_reap:
            ingest.drain_once(client, consumer)
            return next_reap
        # Lost leases first, then the events already sent, then reap.
        ingest.catch_up_and_reap(client, consumer, reaper.lost_candidates(client))
        return time.monotonic() + every

    def _sleep(self, seconds: float) -> None:
        """Wait, but stop at once on SIGTERM."""
        deadline = time.monotonic() + seconds
        while not self.stopping and time.monotonic() < deadline:
            time.sleep(min(0.1, deadline - time.monotonic()))

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        self.stopping = True


class Outage:
    """The database being away, seen from the loop: each failure is logged as an error
    (events are not being stored) and waits longer than the last, up to MAX_DELAY."""

    FIRST_DELAY: Final = 0.5
    MAX_DELAY: Final = 5.0

    def __init__(self) -> None:
        self.since: float | None = None
        self.delay = 0.0

    def failed(self, exc: Exception) -> float:
        """The seconds to wait before the next try."""
        now = time.monotonic()
        if self.since is None:
            self.since = now
        self.delay = min(self.delay * 2, self.MAX_DELAY) if self.delay else self.FIRST_DELAY
        log.error("database unavailable for %.0f s, no run events are being stored; "
                  "retrying in %.1f s: %s", now - self.since, self.delay, exc)
        database.check_idle_connections()  # a restarted server broke every one
        return self.delay

    def ended(self) -> None:
        if self.since is not None:
            log.warning("database available again after %.0f s; storing run events",
                        time.monotonic() - self.since)
            self.since, self.delay = None, 0.0
