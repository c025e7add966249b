"""The ingester's SQL, set-based: one statement per step of a batch, whatever its size.

- lock the batch's runs and read, with them, which of the batch's seqs each already
  stored and the seq of its terminal event (one SELECT … FOR UPDATE);
- store the new events (one INSERT … SELECT FROM unnest of arrays);
- write the runs' changed states (one UPDATE … FROM unnest of arrays).
On the transaction's connection (runs.ingest opens it), so a refused statement
(DataError, IntegrityError, an unencodable text) fails the batch as the ORM did and
runs.ingest's quarantine sets the event at fault aside.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from kionga import prepared_sql
from runner.protocol import TERMINAL_TYPES
from runs.models import Run, RunEvent

_RUNS: Final = Run._meta.db_table
_EVENTS: Final = RunEvent._meta.db_table

_LOCK: Final = f"""
SELECT {prepared_sql.columns(Run, "r")},
       ARRAY(SELECT e.seq FROM {_EVENTS} e WHERE e.run_id = r.id AND e.seq = ANY(%b::integer[])),
       (SELECT max(e.seq) FROM {_EVENTS} e WHERE e.run_id = r.id AND e.type = ANY(%b::text[]))
FROM {_RUNS} r WHERE r.id = ANY(%b::uuid[]) ORDER BY r.id FOR UPDATE OF r
"""


_INSERT_EVENTS: Final = (f"INSERT INTO {_EVENTS} (run_id, seq, type, data) SELECT * FROM "
                         "unnest(%b::uuid[], %b::integer[], %b::text[], %b::jsonb[])")
_UPDATE_RUNS: Final = (
    f"UPDATE {_RUNS} AS r SET status = v.status, started_at = v.started_at, "
    "finished_at = v.finished_at, output = v.output, error = v.error, tokens = v.tokens "
    "FROM unnest(%b::uuid[], %b::text[], %b::timestamptz[], %b::timestamptz[], %b::text[], "
    "%b::jsonb[], %b::bigint[]) AS v(id, status, started_at, finished_at, output, error, "
    "tokens) WHERE r.id = v.id")


@dataclass
class LockedRun:
    run: Run  # a full instance (the runs_ended receivers may read any field)
    stored: set[int]  # the batch's seqs this run already stored
    terminal_seq: int | None


def lock_runs(run_ids: Iterable[str], seqs: Iterable[int]) -> dict[uuid.UUID, LockedRun]:
    ids = [uuid.UUID(r) for r in run_ids]
    rows = prepared_sql.fetch_all(_LOCK, [sorted(set(seqs)), list(TERMINAL_TYPES), ids])
    locked: dict[uuid.UUID, LockedRun] = {}
    for row in rows:
        run, (stored, terminal_seq) = prepared_sql.take(Run, row)
        locked[run.pk] = LockedRun(run, set(stored), terminal_seq)
    return locked


def insert_events(rows: list[tuple[Run, dict[str, Any]]]) -> None:
    if not rows:
        return
    # Arrays, not one VALUES row per event: the statement's text is the same for every
    # batch (psycopg parses it once; a long VALUES list was parsed anew each time).
    # Sent in binary (%b): a text array's elements are escaped by a regex in Python,
    # which cost ten times the rest of the statement for a batch of JSON events.
    prepared_sql.execute(_INSERT_EVENTS, [[run.pk for run, _e in rows],
                                          [e["seq"] for _r, e in rows],
                                          [e["type"] for _r, e in rows],
                                          [json.dumps(e) for _r, e in rows]])


def update_runs(runs: list[Run]) -> None:
    """Write what runs.lifecycle.apply_event changes (status, times, output, error,
    tokens) for each run, in one statement."""
    if not runs:
        return
    columns = list(zip(*((run.pk, run.status, run.started_at, run.finished_at, run.output,
                          None if run.error is None else json.dumps(run.error), run.tokens)
                         for run in runs), strict=True))
    prepared_sql.execute(_UPDATE_RUNS, [list(column) for column in columns])
