"""Reads that must agree with each other: every query in `one_snapshot()` sees the
database as it was at the first one.

PostgreSQL's default READ COMMITTED gives each statement its own snapshot, so a run's
row and its events read by two statements can straddle the ingester's commit (a
terminal event beside a `queued` status). A REPEATABLE READ, READ ONLY transaction
takes one snapshot for all of them; being read-only, it never fails to serialize.
Inside a caller's transaction the level cannot change any more: the caller's
transaction decides.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Final

from django.db import connection, transaction

_READ_ONLY: Final = "kionga_read_only_snapshot"  # set on the connection while in one


@contextmanager
def one_snapshot() -> Iterator[None]:
    outermost = not connection.in_atomic_block
    with transaction.atomic():
        if outermost:
            with connection.cursor() as cursor:
                # Must be the transaction's first statement.
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            setattr(connection, _READ_ONLY, True)
        try:
            yield
        finally:
            if outermost:
                setattr(connection, _READ_ONLY, False)


def in_read_only_snapshot() -> bool:
    """Whether this thread's connection is inside a READ ONLY one_snapshot(): a write
    must wait until it ends (transaction.on_commit)."""
    return bool(getattr(connection, _READ_ONLY, False))
