"""PostgreSQL away: which errors say so, and the one answer they get.

Any route that meets such an error answers 503 `service_unavailable` with Retry-After
(DatabaseUnavailable): every Django view, DRF's included (its handler leaves database
errors to Django), through kionga.middleware; event streams through kionga.pooled.
How long a request waits for a connection is bounded by KIONGA_DB_CONNECT_TIMEOUT
(kionga.settings: the pool's timeout and libpq's connect_timeout).
docs/decisions/postgresql-away.md says why it is built so.

A server that went away leaves every idle connection of the pool broken, and the
pool does not know until one is used. The first error that says the database is
away has the idle ones checked (in the background, by the pool's own check), so a
restarted server costs the first requests of a process, not one per pooled
connection, and none is kept broken.
"""

from __future__ import annotations

import logging
import threading
from typing import Final

import psycopg
from django.db import InterfaceError, OperationalError, connection

from kionga.errors import APIError

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS: Final = 5
MESSAGE: Final = "The database is unavailable; try again shortly."
# SQLSTATEs of a server that cannot serve: connection exceptions (class 08), shutting
# down or starting up (57P01-57P03), out of connection slots (53300). Client-side
# failures (the socket closed, no connection from the pool in time) have none.
_AWAY_STATES: Final = frozenset({"57P01", "57P02", "57P03", "53300"})

_checking = threading.Lock()


class DatabaseUnavailable(APIError):
    """503 service_unavailable, Retry-After: 5."""

    def __init__(self) -> None:
        super().__init__(503, "service_unavailable", MESSAGE, retry_after=RETRY_AFTER_SECONDS)


def is_away(exc: BaseException) -> bool:
    """True when `exc` says PostgreSQL cannot be reached or cannot serve (not a fault
    of the statement: a deadlock, a timeout or a constraint is no outage)."""
    if not isinstance(exc, OperationalError | InterfaceError | psycopg.Error):
        return False
    error = exc if isinstance(exc, psycopg.Error) else exc.__cause__
    if isinstance(error, psycopg.InterfaceError):
        return True
    if not isinstance(error, psycopg.OperationalError):
        return False  # anything else stays what it is
    state = error.sqlstate
    return state is None or state.startswith("08") or state in _AWAY_STATES


def unavailable(exc: BaseException) -> DatabaseUnavailable | None:
    """The 503 to answer for `exc` when it says the database is away, else None."""
    if not is_away(exc):
        return None
    log.warning("database unavailable: %s", exc)
    check_idle_connections()
    return DatabaseUnavailable()


def check_idle_connections() -> None:
    """Have the pool test its idle connections and drop the broken ones, once at a
    time and off the request's thread (a connection to a silent host could hang)."""
    pool = getattr(connection, "pool", None)
    if pool is None or not _checking.acquire(blocking=False):
        return

    def check() -> None:
        try:
            pool.check()
        except Exception:  # the pool is closing: nothing left to check
            log.debug("pool check failed", exc_info=True)
        finally:
            _checking.release()

    threading.Thread(target=check, name="db-pool-check", daemon=True).start()
