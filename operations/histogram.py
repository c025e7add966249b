"""Latency histograms with fixed log-spaced buckets, and percentiles read off them.

Bucket 0 holds latencies below 1 ms; bucket i (1 to 240) holds [2^((i-1)/8), 2^(i/8)) ms,
eight buckets per doubling; bucket 241 holds 2^30 ms (12.4 days) and more.

A percentile is read the way PostgreSQL's `percentile_cont` reads sorted values: the two
order statistics around rank q·(n-1), interpolated linearly. Each order statistic is
replaced by its bucket's representative 2·lo·hi/(lo+hi), which lies within
EPSILON = (2^(1/8) - 1)/(2^(1/8) + 1) ≈ 4.33 % of any value of the bucket (0.5 for
bucket 0, within 0.5 ms of its values). Interpolation keeps the bound, so

    |estimate - exact| <= EPSILON * exact + 0.5 ms      (latencies below 2^30 ms)

(tests/test_operations_histogram.py checks it with hypothesis). Latencies of 2^30 ms and
more are reported as 2^30 ms. Pure Python: no Django, shared with the SQL that fills the
buckets (BUCKET_SQL computes the same index with the same floating-point operations).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

PER_DOUBLING: Final = 8
TOP_EXPONENT: Final = 30
BUCKETS: Final = PER_DOUBLING * TOP_EXPONENT + 2
RATIO: Final = 2 ** (1 / PER_DOUBLING)
EPSILON: Final = (RATIO - 1) / (RATIO + 1)
ABSOLUTE_MS: Final = 0.5
TOP_MS: Final = float(2 ** TOP_EXPONENT)

# The bucket index of `{x}` (float8 milliseconds, never null) in PostgreSQL.
BUCKET_SQL: Final = (f"CASE WHEN {{x}} < 1 THEN 0 ELSE LEAST(floor(ln({{x}}) * {PER_DOUBLING} "
                     f"/ ln(2))::int + 1, {BUCKETS - 1}) END")


def bucket_of(ms: float) -> int:
    if ms < 1:
        return 0
    return min(math.floor(math.log(ms) * PER_DOUBLING / math.log(2)) + 1, BUCKETS - 1)


def _representative(index: int) -> float:
    if index == 0:
        return ABSOLUTE_MS
    if index == BUCKETS - 1:
        return TOP_MS
    low, high = 2 ** ((index - 1) / PER_DOUBLING), 2 ** (index / PER_DOUBLING)
    return 2 * low * high / (low + high)


REPRESENTATIVES: Final = tuple(_representative(i) for i in range(BUCKETS))


def percentiles(counts: Sequence[int], qs: Sequence[float]) -> list[float | None]:
    """Estimates of percentile_cont(q) for each q of `qs` (None when `counts` is empty)."""
    total = sum(counts)
    if total == 0:
        return [None for _ in qs]
    cumulative: list[int] = []
    running = 0
    for count in counts:
        running += count
        cumulative.append(running)
    return [_estimate(cumulative, q * (total - 1)) for q in qs]


def _estimate(cumulative: list[int], position: float) -> float:
    below = math.floor(position)
    fraction = position - below
    low = REPRESENTATIVES[_bucket_of_rank(cumulative, below)]
    if fraction == 0:
        return low
    high = REPRESENTATIVES[_bucket_of_rank(cumulative, below + 1)]
    return low + fraction * (high - low)


def _bucket_of_rank(cumulative: list[int], rank: int) -> int:
    """The bucket holding the value of 0-based rank `rank` in sorted order."""
    low, high = 0, len(cumulative) - 1
    while low < high:
        middle = (low + high) // 2
        if cumulative[middle] > rank:
            high = middle
        else:
            low = middle + 1
    return low
