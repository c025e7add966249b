"""One declared backoff: how long and how often a call is tried again.

Like LangGraph's RetryPolicy: a policy is data (first wait, growth factor, longest
wait, overall deadline, which errors are worth another try) and `retrying` is the
one loop that follows it, so every caller waits the same way and says only what
differs (its deadline, what to log).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    initial: float = 0.05  # seconds before the second try
    factor: float = 2.0  # each wait is this much longer than the one before ...
    max_delay: float = 2.0  # ... up to this
    # No wait starts that would end later than this many seconds after the first try.
    deadline: float = 60.0
    retry_on: tuple[type[Exception], ...] = (Exception,)

    def next_delay(self, delay: float) -> float:
        return min(delay * self.factor, self.max_delay)


def retrying(call: Callable[[], T], policy: RetryPolicy,
             on_retry: Callable[[Exception, float], None] = lambda exc, delay: None) -> T:
    """call(), tried again after each `retry_on` error while the deadline allows.

    The error that exhausts the policy, and any other error, propagates unchanged;
    `on_retry(error, delay)` hears of each failure that is retried (to log it).
    """
    deadline = time.monotonic() + policy.deadline
    delay = policy.initial
    while True:
        try:
            return call()
        except policy.retry_on as exc:
            if time.monotonic() + delay > deadline:
                raise
            on_retry(exc, delay)
            time.sleep(delay)
            delay = policy.next_delay(delay)
