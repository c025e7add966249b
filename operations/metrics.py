"""Metrics of deployed agents and of a project, read from the rollups.

A window of `hours` is 24 buckets of `hours` slots of 150 seconds (operations/rollups.py),
the last bucket ending with the current slot: it starts at most 150 s later than
now - hours. PostgreSQL sums the rollups of the window per bucket (one indexed read of
at most 24 × 168 rows); the runs still active (queued, running, waiting: not in the
rollups yet) are added from the runs themselves (requests, tokens, cost). Percentiles
are read off the summed latency histograms (operations/histogram.py: within 4.33 %
+ 0.5 ms of percentile_cont over the runs). Latency is what the runtime reported for a
turn (`latency_ms`), for other runs `finished_at - started_at`. Errors are `failed` runs;
the success rate is completed / ended (null when none ended).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Final

from django.db import connection
from django.utils import timezone

from evaluations.models import Evaluation
from operations.histogram import BUCKETS, percentiles
from operations.rollups import HISTOGRAM, SLOT_SECONDS, slot_of
from runs.models import ACTIVE_STATUSES

SERIES_BUCKETS: Final = 24
QUANTILES: Final = (0.5, 0.95, 0.99)
_ACTIVE_IN: Final = "(" + ", ".join(f"'{status}'" for status in sorted(ACTIVE_STATUSES)) + ")"

_ROLLUPS_SQL: Final = f"""
SELECT (slot - %(first)s) / %(width)s AS b, sum(ended), sum(completed), sum(errors),
       sum(tokens), sum(cost), {", ".join(f"sum({c})" for c in HISTOGRAM)}
FROM operations_rollup
WHERE project_id = %(project)s AND {{agent}} AND slot BETWEEN %(first)s AND %(last)s
GROUP BY 1
"""

_ACTIVE_SQL: Final = f"""
SELECT LEAST(GREATEST(floor(date_part('epoch', created_at) / {SLOT_SECONDS})::int
                      - %(first)s, 0) / %(width)s, {SERIES_BUCKETS - 1}) AS b,
       count(*), sum(tokens), sum(cost)
FROM runs_run
WHERE status IN {_ACTIVE_IN} AND project_id = %(project)s AND {{agent}}
  AND created_at >= %(start)s
GROUP BY 1
"""


@dataclass(frozen=True)
class Scope:
    """A project's runs (agent None) or one agent's turns."""

    project_id: int
    agent_id: Any = None

    def sql(self) -> str:
        return "agent_id IS NULL" if self.agent_id is None else "agent_id = %(agent)s"


@dataclass(frozen=True)
class Window:
    hours: int
    first: int  # slots
    last: int

    @classmethod
    def ending(cls, now: datetime, hours: int) -> Window:
        last = slot_of(now)
        return cls(hours, last - SERIES_BUCKETS * hours + 1, last)

    @property
    def start(self) -> datetime:
        return self.bucket_start(0)

    def bucket_start(self, bucket: int) -> datetime:
        return datetime.fromtimestamp((self.first + bucket * self.hours) * SLOT_SECONDS, UTC)


class _Sums:
    def __init__(self) -> None:
        self.requests = self.ended = self.completed = self.errors = self.tokens = 0
        self.cost = Decimal(0)
        self.histogram = [0] * BUCKETS

    def add_rollup(self, row: tuple[Any, ...]) -> None:
        ended, completed, errors, tokens, cost, *histogram = row
        self.requests += int(ended)
        self.ended += int(ended)
        self.completed += int(completed)
        self.errors += int(errors)
        self.tokens += int(tokens)
        self.cost += Decimal(cost)
        self.histogram = [a + int(b) for a, b in zip(self.histogram, histogram, strict=True)]

    def add_active(self, requests: int, tokens: Any, cost: Any) -> None:
        self.requests += int(requests)
        self.tokens += int(tokens or 0)
        self.cost += Decimal(cost or 0)

    def add(self, other: _Sums) -> None:
        self.add_active(other.requests, other.tokens, other.cost)
        self.ended += other.ended
        self.completed += other.completed
        self.errors += other.errors
        self.histogram = [a + b for a, b in zip(self.histogram, other.histogram, strict=True)]

    def figures(self) -> dict[str, Any]:
        p50, p95, p99 = (None if p is None else round(p, 3)
                         for p in percentiles(self.histogram, QUANTILES))
        return {"requests": self.requests, "errors": self.errors,
                "latency_ms": {"p50": p50, "p95": p95, "p99": p99},
                "tokens": self.tokens, "cost": float(self.cost)}


def series(scope: Scope, hours: int, now: datetime | None = None
           ) -> tuple[Window, dict[str, Any], list[dict[str, Any]]]:
    """(window, totals, 24 buckets) of the scope's runs in the last `hours`."""
    window = Window.ending(now or timezone.now(), hours)
    params = {"project": scope.project_id, "agent": scope.agent_id, "first": window.first,
              "last": window.last, "width": hours, "start": window.start}
    buckets = [_Sums() for _ in range(SERIES_BUCKETS)]
    with connection.cursor() as cursor:
        cursor.execute(_ROLLUPS_SQL.replace("{agent}", scope.sql()), params)
        for bucket, *row in cursor.fetchall():
            buckets[bucket].add_rollup(tuple(row))
        cursor.execute(_ACTIVE_SQL.replace("{agent}", scope.sql()), params)
        for bucket, requests, tokens, cost in cursor.fetchall():
            buckets[bucket].add_active(requests, tokens, cost)
    total = _Sums()
    for sums in buckets:
        total.add(sums)
    totals = {**total.figures(),
              "success_rate": (round(total.completed / total.ended, 4) if total.ended else None)}
    return window, totals, [{"start": window.bucket_start(b).isoformat(), **sums.figures()}
                            for b, sums in enumerate(buckets)]


def failures_by_reason(project_id: int, window: Window) -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT code, sum(count) FROM operations_failurerollup "
            "WHERE project_id = %s AND slot BETWEEN %s AND %s "
            "GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 50",
            [project_id, window.first, window.last])
        return {code: int(count) for code, count in cursor.fetchall()}


def evaluations_started(project_id: int, start: datetime) -> int:
    """Evaluations started in the window."""
    return Evaluation.objects.filter(project_id=project_id, created_at__gte=start).count()


_VERSIONS_SQL: Final = f"""
SELECT version_id, sum(ended), sum(completed), sum(errors), sum(tokens), sum(cost),
       {", ".join(f"sum({c})" for c in HISTOGRAM)}
FROM operations_rollup
WHERE project_id = %(project)s AND agent_id = %(agent)s AND version_id = ANY(%(versions)s)
  AND slot BETWEEN %(first)s AND %(last)s
GROUP BY 1
"""

_VERSIONS_ACTIVE_SQL: Final = f"""
SELECT version_id, count(*), sum(tokens), sum(cost)
FROM runs_run
WHERE status IN {_ACTIVE_IN} AND project_id = %(project)s AND agent_id = %(agent)s
  AND version_id = ANY(%(versions)s) AND created_at >= %(start)s
GROUP BY 1
"""


def per_version(scope: Scope, version_ids: list[str], hours: int,
                now: datetime | None = None) -> dict[str, dict[str, Any]]:
    """{version_id: totals} of an agent's turns in the last `hours`, per version that
    served them (the rollups' version key): a canary beside the current version."""
    window = Window.ending(now or timezone.now(), hours)
    params = {"project": scope.project_id, "agent": scope.agent_id, "versions": version_ids,
              "first": window.first, "last": window.last, "start": window.start}
    sums = {version_id: _Sums() for version_id in version_ids}
    with connection.cursor() as cursor:
        cursor.execute(_VERSIONS_SQL, params)
        for version_id, *row in cursor.fetchall():
            sums[version_id].add_rollup(tuple(row))
        cursor.execute(_VERSIONS_ACTIVE_SQL, params)
        for version_id, requests, tokens, cost in cursor.fetchall():
            sums[version_id].add_active(requests, tokens, cost)
    return {version_id: {**found.figures(), "success_rate": (
                round(found.completed / found.ended, 4) if found.ended else None)}
            for version_id, found in sums.items()}
