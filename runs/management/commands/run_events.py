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
from runs import ingest, ingest_stream, reaper

log = logging.getLogger(__name__)


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
        needs_group = True
        # At start (and after losing Redis or the database) every pending entry is
        # taken over first: a consumer that died a moment ago left its entries
        # there, and they come before anything newer of their runs.
        needs_claim = True
        outage = Outage()
        while not self.stopping:
            try:
                if needs_group:
                    ingest_stream.ensure_group(client)
                    needs_group = False
                if needs_claim:
                    ingest.drain_claimed(client, consumer, min_idle_ms=0)
                    needs_claim = False
                next_reap = self._loop_once(client, consumer, next_reap, options["reap_every"])
            except redis.ConnectionError:
                # Redis restarting: stored events are safe in PostgreSQL; wait and go on.
                # A Redis without persistence comes back without our group: recreate it.
                log.warning("Redis unavailable; retrying")
                needs_group = needs_claim = True
                time.sleep(0.5)
            except redis.ResponseError as exc:
                if "NOGROUP" not in str(exc):
                    raise
                needs_group = needs_claim = True
            except (OperationalError, InterfaceError) as exc:
                # The database is away: the batch stays pending (ours) until it is back.
                delay = outage.failed(exc)
                needs_claim = True
                time.sleep(delay)
            else:
                outage.ended()
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
