"""Metrics of deployed agents and of a project, computed by PostgreSQL.

Percentiles with `percentile_cont`, the 24 buckets with `generate_series` (empty
buckets included) and the totals in the same scan (`GROUPING SETS`); nothing loads
rows into Python. Latency is what the runtime reported for a turn (`latency_ms`), for
other runs `finished_at - started_at`. Errors are `failed` runs; the success rate is
completed / ended (null when none ended).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any, Final

from django.db import connection, transaction
from django.utils import timezone

from evaluations.models import Evaluation

BUCKETS: Final = 24
# Turns carry latency_ms (an index-only scan of run_agent_created); other runs use their
# timestamps (run_project_created includes them). date_part is float8: EXTRACT is numeric
# and several times slower over a million rows.
TURN_LATENCY: Final = "latency_ms::float8"
RUN_LATENCY: Final = ("COALESCE(latency_ms::float8, "
                      "date_part('epoch', finished_at - started_at) * 1000)")
ENDED: Final = "('completed', 'failed', 'cancelled')"
# Sorting a million latencies for percentile_cont fits in memory with this.
WORK_MEM: Final = "SET LOCAL work_mem = '64MB'"

_SERIES_SQL: Final = f"""
WITH agg AS (
  SELECT t.b, GROUPING(t.b) AS total,
         count(*) AS requests,
         count(*) FILTER (WHERE status = 'failed') AS errors,
         count(*) FILTER (WHERE status = 'completed') AS completed,
         count(*) FILTER (WHERE status IN {ENDED}) AS ended,
         percentile_cont(ARRAY[0.5, 0.95, 0.99]) WITHIN GROUP (ORDER BY latency) AS p,
         COALESCE(sum(tokens), 0) AS tokens, COALESCE(sum(cost), 0) AS cost
  FROM (SELECT LEAST(FLOOR(date_part('epoch', created_at - %(start)s) / %(width)s)::int,
                     {BUCKETS - 1}) AS b,
               status, {{latency}} AS latency, tokens, cost
        FROM runs_run
        WHERE {{scope}} AND created_at >= %(start)s AND created_at < %(end)s) AS t
  GROUP BY GROUPING SETS ((t.b), ())
)
SELECT g.b, agg.total, COALESCE(agg.requests, 0), COALESCE(agg.errors, 0),
       COALESCE(agg.completed, 0), COALESCE(agg.ended, 0), agg.p,
       COALESCE(agg.tokens, 0), COALESCE(agg.cost, 0)
FROM generate_series(-1, {BUCKETS - 1}) AS g(b)
LEFT JOIN agg ON (g.b = -1 AND agg.total = 1) OR (g.b >= 0 AND agg.total = 0 AND agg.b = g.b)
ORDER BY g.b
"""


def _figures(row: tuple[Any, ...]) -> dict[str, Any]:
    _, _, requests, errors, completed, ended, p, tokens, cost = row
    p50, p95, p99 = (round(v, 3) if v is not None else None for v in (p or [None] * 3))
    return {"requests": requests, "errors": errors, "completed": completed, "ended": ended,
            "latency_ms": {"p50": p50, "p95": p95, "p99": p99},
            "tokens": int(tokens), "cost": float(Decimal(cost))}


def series(scope_sql: str, params: dict[str, Any], hours: int, now: datetime | None = None,
           latency: str = RUN_LATENCY) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(totals, 24 buckets) of the runs matching `scope_sql` in the last `hours`."""
    end = now or timezone.now()
    start = end - timedelta(hours=hours)
    width = hours * 3600 / BUCKETS
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(WORK_MEM)
        cursor.execute(_SERIES_SQL.replace("{scope}", scope_sql).replace("{latency}", latency),
                       {**params, "start": start, "end": end, "width": width})
        rows = cursor.fetchall()
    totals = _figures(rows[0])
    totals["success_rate"] = (round(totals["completed"] / totals["ended"], 4)
                              if totals["ended"] else None)
    buckets = [{"start": (start + timedelta(seconds=width * row[0])).isoformat(),
                **_figures(row)} for row in rows[1:]]
    for bucket in buckets:
        del bucket["completed"], bucket["ended"]
    return totals, buckets


def failures_by_reason(project_id: int, start: datetime, end: datetime) -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT COALESCE(error->>'code', 'unknown'), count(*) FROM runs_run "
            "WHERE project_id = %s AND created_at >= %s AND created_at < %s "
            "AND status = 'failed' GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 50",
            [project_id, start, end])
        return {code: count for code, count in cursor.fetchall()}


def evaluations_started(project_id: int, start: datetime) -> int:
    """Evaluations started in the window."""
    return Evaluation.objects.filter(project_id=project_id, created_at__gte=start).count()
