"""Keeping the rollups (operations/models.py): as runs end, and rebuilt from the runs.

`do_roll_up_ended` runs in the transaction that stores the runs' final status (the
`runs_ended` receiver): the ingester's batch, a reported turn, the reaper. A run ends
once (its status guards), so it is counted once. The batch is summed per scope and slot
in Python, then one upsert per table (rows in key order, so concurrent batches never
deadlock). `do_rebuild` recomputes every slot from a time on from the runs themselves,
in SQL (idempotent: it replaces those slots), for data stored before the rollups existed
or loaded around the end path (the migration, bench/operations.py, tests).
"""

from __future__ import annotations

import math
from collections import Counter
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Final

from django.db import connection, transaction

from operations.histogram import BUCKET_SQL, BUCKETS, bucket_of
from runs.models import FINAL_STATUSES, Run

SLOT_SECONDS: Final = 150
# Metrics read at most 168 hours back; a day more for late readers and slow clocks.
KEEP: Final = timedelta(days=8)
CODE_LENGTH: Final = 64
# Values per statement: a batch of runs from many slots, each touching many buckets, is
# upserted in several statements (server-side binding would refuse past 65,535).
MAX_PARAMETERS: Final = 20_000
HISTOGRAM: Final = [f"h{i}" for i in range(BUCKETS)]
_ENDED_IN: Final = "(" + ", ".join(f"'{status}'" for status in sorted(FINAL_STATUSES)) + ")"

# Both scopes of each ended run (its project; its agent and version, for a turn), counted
# per latency bucket, then one row per scope and slot with a column per bucket.
_ROLL_UP: Final = f"""
, scoped AS (
  SELECT project_id, NULL::uuid AS agent_id, '' AS version_id, slot, status, latency, tokens,
         cost FROM ended
  UNION ALL
  SELECT project_id, agent_id, version_id, slot, status, latency, tokens, cost FROM ended
  WHERE agent_id IS NOT NULL
), counted AS (
  SELECT project_id, agent_id, version_id, slot,
         CASE WHEN latency IS NOT NULL THEN {BUCKET_SQL.format(x="latency")} END AS bucket,
         count(*) AS n, count(*) FILTER (WHERE status = 'completed') AS completed,
         count(*) FILTER (WHERE status = 'failed') AS errors,
         sum(tokens) AS tokens, sum(cost) AS cost
  FROM scoped GROUP BY 1, 2, 3, 4, 5
)
INSERT INTO operations_rollup (project_id, agent_id, version_id, slot, ended, completed, errors,
                               tokens, cost, {", ".join(HISTOGRAM)})
SELECT project_id, agent_id, version_id, slot, sum(n), sum(completed), sum(errors),
       sum(tokens), sum(cost),
       {", ".join(f"COALESCE(sum(n) FILTER (WHERE bucket = {i}), 0)" for i in range(BUCKETS))}
FROM counted GROUP BY 1, 2, 3, 4 ORDER BY 1, 2 NULLS FIRST, 3, 4
ON CONFLICT (project_id, agent_id, version_id, slot) DO UPDATE SET
  {", ".join(f"{c} = operations_rollup.{c} + EXCLUDED.{c}"
             for c in ("ended", "completed", "errors", "tokens", "cost", *HISTOGRAM))}
"""

_FAILURES: Final = f"""
INSERT INTO operations_failurerollup (project_id, slot, code, count)
SELECT project_id, slot, left(COALESCE(code, 'unknown'), {CODE_LENGTH}), count(*)
FROM ended WHERE status = 'failed' GROUP BY 1, 2, 3 ORDER BY 1, 2, 3
ON CONFLICT (project_id, slot, code) DO UPDATE
  SET count = operations_failurerollup.count + EXCLUDED.count
"""

# The runs stored since a slot (latency as the metrics define it, operations/metrics.py).
_STORED: Final = f"""
WITH ended AS (
  SELECT project_id, agent_id, version_id,
         floor(date_part('epoch', created_at) / {SLOT_SECONDS})::int AS slot,
         status, COALESCE(latency_ms::float8,
                          date_part('epoch', finished_at - started_at) * 1000) AS latency,
         tokens, cost, error->>'code' AS code
  FROM runs_run WHERE status IN {_ENDED_IN} AND created_at >= %(start)s
)"""


def slot_of(moment: datetime) -> int:
    return math.floor(moment.timestamp() / SLOT_SECONDS)


def do_roll_up_ended(runs: list[Run]) -> None:
    """Count runs that just ended (call inside the transaction storing their end).

    Summed here per scope and slot, then one upsert naming only the histogram columns
    the batch touches: a statement over all 250 columns costs PostgreSQL ~5 ms to plan,
    this one a fraction of a millisecond."""
    ended = [run for run in runs if run.status in FINAL_STATUSES]
    if not ended:
        return
    sums: dict[tuple[int, Any, str, int], _Slot] = {}
    failures: Counter[tuple[int, int, str]] = Counter()
    for run in ended:
        slot = slot_of(run.created_at)
        sums.setdefault((run.project_id, None, "", slot), _Slot()).add(run)
        if run.agent_id is not None:
            sums.setdefault((run.project_id, run.agent_id, run.version_id, slot),
                            _Slot()).add(run)
        if run.status == Run.Status.FAILED:
            failures[(run.project_id, slot, _code(run))] += 1
    with connection.cursor() as cursor:
        _upsert_rollups(cursor, sums)
        rows = [[*key, failures[key]] for key in sorted(failures)]
        for chunk in _chunks(rows, 4):
            cursor.execute(
                "INSERT INTO operations_failurerollup (project_id, slot, code, count) VALUES "
                + ", ".join(["(%s, %s, %s, %s)"] * len(chunk))
                + " ON CONFLICT (project_id, slot, code) DO UPDATE"
                  " SET count = operations_failurerollup.count + EXCLUDED.count",
                [value for row in chunk for value in row])


class _Slot:
    def __init__(self) -> None:
        self.ended = self.completed = self.errors = self.tokens = 0
        self.cost = Decimal(0)
        self.buckets: Counter[int] = Counter()

    def add(self, run: Run) -> None:
        self.ended += 1
        self.completed += run.status == Run.Status.COMPLETED
        self.errors += run.status == Run.Status.FAILED
        self.tokens += run.tokens
        self.cost += Decimal(run.cost)
        latency = _latency(run)
        if latency is not None:
            self.buckets[bucket_of(latency)] += 1


def _upsert_rollups(cursor: Any, sums: dict[tuple[int, Any, str, int], _Slot]) -> None:
    buckets = sorted({b for slot in sums.values() for b in slot.buckets})
    columns = ["ended", "completed", "errors", "tokens", "cost", *(f"h{b}" for b in buckets)]
    # Key order (the project's row before its agents'), so concurrent ends never deadlock.
    keys = sorted(sums, key=lambda k: (k[0], k[1] is not None, str(k[1]), k[2], k[3]))
    rows = [[*key, sums[key].ended, sums[key].completed, sums[key].errors, sums[key].tokens,
             sums[key].cost, *(sums[key].buckets[b] for b in buckets)] for key in keys]
    placeholders = "(" + ", ".join(["%s"] * (4 + len(columns))) + ")"
    for chunk in _chunks(rows, 4 + len(columns)):
        cursor.execute(
            "INSERT INTO operations_rollup (project_id, agent_id, version_id, slot, "
            f"{', '.join(columns)}) VALUES {', '.join([placeholders] * len(chunk))} "
            "ON CONFLICT (project_id, agent_id, version_id, slot) DO UPDATE SET "
            + ", ".join(f"{c} = operations_rollup.{c} + EXCLUDED.{c}" for c in columns),
            [value for row in chunk for value in row])


def _chunks(rows: list[list[Any]], width: int) -> list[list[list[Any]]]:
    size = max(1, MAX_PARAMETERS // width)
    return [rows[i:i + size] for i in range(0, len(rows), size)]


def do_rebuild(since: datetime) -> None:
    """Recompute every slot from `since`'s on from the stored runs (replacing them)."""
    first = slot_of(since)
    with transaction.atomic(), connection.cursor() as cursor:
        # Ends committed meanwhile wait, then add to the rebuilt rows: none is lost or
        # counted twice.
        cursor.execute("LOCK TABLE operations_rollup, operations_failurerollup "
                       "IN SHARE ROW EXCLUSIVE MODE")
        cursor.execute("DELETE FROM operations_rollup WHERE slot >= %s", [first])
        cursor.execute("DELETE FROM operations_failurerollup WHERE slot >= %s", [first])
        params = {"start": datetime.fromtimestamp(first * SLOT_SECONDS, since.tzinfo)}
        cursor.execute(_STORED + _ROLL_UP, params)
        cursor.execute(_STORED + _FAILURES, params)


def do_prune(now: datetime) -> int:
    """Drop the slots older than KEEP; returns how many rows went."""
    before = slot_of(now - KEEP)
    with connection.cursor() as cursor:
        cursor.execute("DELETE FROM operations_rollup WHERE slot < %s", [before])
        pruned = cursor.rowcount
        cursor.execute("DELETE FROM operations_failurerollup WHERE slot < %s", [before])
        return pruned + cursor.rowcount


def _latency(run: Run) -> float | None:
    if run.latency_ms is not None:
        return float(run.latency_ms)
    if run.finished_at and run.started_at:
        return (run.finished_at - run.started_at).total_seconds() * 1000
    return None


def _code(run: Run) -> str:
    """A failed run's error code as the failures rollup keys it (SQL: _FAILURES)."""
    code = run.error.get("code") if isinstance(run.error, dict) else None
    return "unknown" if code is None else str(code)[:CODE_LENGTH]
