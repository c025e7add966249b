"""The latency histogram's percentiles stay within the documented bound of
percentile_cont's (|estimate - exact| <= EPSILON * exact + 0.5 ms), whatever the data."""

from __future__ import annotations

import math

from django.db import connection
from hypothesis import given, settings
from hypothesis import strategies as st

from operations.histogram import (
    ABSOLUTE_MS,
    BUCKET_SQL,
    BUCKETS,
    EPSILON,
    PER_DOUBLING,
    TOP_MS,
    bucket_of,
    percentiles,
)


def percentile_cont(values: list[float], q: float) -> float:
    """PostgreSQL's percentile_cont: linear interpolation between order statistics."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    below = math.floor(position)
    if below + 1 >= len(ordered):
        return ordered[below]
    return ordered[below] + (position - below) * (ordered[below + 1] - ordered[below])


def histogram(values: list[float]) -> list[int]:
    counts = [0] * BUCKETS
    for value in values:
        counts[bucket_of(value)] += 1
    return counts


# Milliseconds from sub-millisecond to days, log-uniform, and small whole numbers.
LATENCY = st.one_of(st.floats(min_value=-3, max_value=math.log2(TOP_MS) - 1e-9)
                    .map(lambda e: 2 ** e), st.integers(0, 5000).map(float))


@settings(max_examples=300, deadline=None)
@given(values=st.lists(LATENCY, min_size=1, max_size=200),
       qs=st.lists(st.floats(0, 1), min_size=1, max_size=4))
def test_the_estimates_stay_within_the_bound(values: list[float], qs: list[float]) -> None:
    estimates = percentiles(histogram(values), qs)
    for q, estimate in zip(qs, estimates, strict=True):
        exact = percentile_cont(values, q)
        assert estimate is not None
        assert abs(estimate - exact) <= EPSILON * exact + ABSOLUTE_MS + 1e-9 * exact, (q, exact)


def test_an_empty_histogram_has_no_percentiles() -> None:
    assert percentiles([0] * BUCKETS, [0.5, 0.99]) == [None, None]
    assert EPSILON < 0.0434


def test_postgresql_files_latencies_in_the_same_buckets(db: None) -> None:
    edges = [2 ** (i / PER_DOUBLING) for i in range(BUCKETS)]
    values = [0.0, 0.999, 1.0, 2.5, 999.5, TOP_MS, TOP_MS * 4,
              *edges, *(e * 1.0001 for e in edges), *(e * 0.9999 for e in edges)]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {BUCKET_SQL.format(x='v')} FROM unnest(%s::float8[]) "
                       "WITH ORDINALITY AS t(v, i) ORDER BY i", [values])
        assert [row[0] for row in cursor.fetchall()] == [bucket_of(v) for v in values]
