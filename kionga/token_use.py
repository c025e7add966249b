"""Which projects each API token reached (kionga.models.TokenUse), so that a project's
admins list only the tokens used in their project, with the last use there.

A use is recorded where a membership check finds the token's holder a member of the
project: kionga.access (every DRF route), runs.read, and the run start's and the event
stream's one reads (runs.start_read, runs.stream_open). It costs at most one write per token
and project a minute: the write is a conditional upsert (a row fresher than a minute is
left alone, whichever process wrote it), and each process skips the statement for a
minute after a write of its own has committed.
"""

from __future__ import annotations

import functools
import time
from datetime import timedelta
from typing import Any, Final

from django.db import connection, transaction
from django.utils import timezone

from kionga.models import TokenUse
from kionga.snapshot import in_read_only_snapshot
from kionga.token_scope import token_of
from kionga.tokens import LAST_USED_RESOLUTION_SECONDS

_TABLE: Final = TokenUse._meta.db_table
_UPSERT: Final = (
    f"INSERT INTO {_TABLE} (token_id, project_id, last_used_at) VALUES (%s, %s, %s) "
    "ON CONFLICT (token_id, project_id) DO UPDATE SET last_used_at = excluded.last_used_at "
    f"WHERE {_TABLE}.last_used_at < %s"
)
# (token ID, project ID) → time.monotonic() of this process's last committed write.
_written: dict[tuple[int, int], float] = {}
_WRITTEN_LIMIT: Final = 10_000  # past it, start over: a few extra upserts, bounded memory


def note(user: Any, project_id: int) -> None:
    """The request's user is a member of project_id: record its token's use there
    (nothing for a session)."""
    token_id = token_of(user)
    if token_id is not None:
        record(token_id, project_id)


def record(token_id: int, project_id: int) -> None:
    """Token token_id reached project project_id now."""
    key = (token_id, project_id)
    now = time.monotonic()
    last = _written.get(key)
    if last is not None and now - last < LAST_USED_RESOLUTION_SECONDS:
        return
    if in_read_only_snapshot():  # a read in one snapshot cannot write: right after it
        transaction.on_commit(functools.partial(record, token_id, project_id), robust=True)
        return
    at = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(_UPSERT, [token_id, project_id, at,
                                 at - timedelta(seconds=LAST_USED_RESOLUTION_SECONDS)])
    # Only once it is committed: a rolled-back write must be tried again next time.
    transaction.on_commit(functools.partial(_remember, key, now))


def _remember(key: tuple[int, int], at: float) -> None:
    if len(_written) >= _WRITTEN_LIMIT:
        _written.clear()
    _written[key] = at
