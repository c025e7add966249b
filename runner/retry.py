"""One declared backoff (like LangGraph's RetryPolicy): a policy is data, `retrying`
is the one loop that follows it, so every caller waits the same way."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    initial: float = 0.05  # seconds before the second try
    factor: float = 2.0  # each wait is this much longer than the one before ...
    max_delay: float = 2.0  # ... up to this
    # No wait starts that would end later than this many seconds after the first try.
    deadline: float = 60.0
    retry_on: tuple[type[Exception], ...] = (Exception,)


def retrying(call: Callable[[], T], policy: RetryPolicy, what: str) -> T:
    """call(), tried again after each `retry_on` error while the deadline allows (each
    logged as a warning starting with `what`). The error that exhausts the policy, and
    any other error, propagates unchanged."""
    deadline = time.monotonic() + policy.deadline
    delay = policy.initial
    while True:
        try:
            return call()
        except policy.retry_on as exc:
            if time.monotonic() + delay > deadline:
                raise
            log.warning("%s (%s), retrying in %.2f s", what, type(exc).__name__, delay)
            time.sleep(delay)
            delay = min(delay * policy.factor, policy.max_delay)


async def retrying_async(call: Callable[[], Awaitable[T]], policy: RetryPolicy, what: str) -> T:
    """retrying for a coroutine: the same waits, slept on the event loop."""
    deadline = time.monotonic() + policy.deadline
    delay = policy.initial
    while True:
        try:
            return await call()
        except policy.retry_on as exc:
            if time.monotonic() + delay > deadline:
                raise
            log.warning("%s (%s), retrying in %.2f s", what, type(exc).__name__, delay)
            await asyncio.sleep(delay)
            delay = min(delay * policy.factor, policy.max_delay)
