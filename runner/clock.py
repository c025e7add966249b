"""Clocks that stand still while a person is asked (docs/decisions/run-clock-and-approval-waits.md).

A run's timeout_seconds, a nested run's and a node's own timeout count the time the
run works, not the time it waits for someone's decision: the approval's own
timeout_seconds bounds that wait. Clocks form a chain (an approval node's attempt →
its run → the subflow node calling that run → … → the top run), and a wait stops
every clock of the chain, so an approval inside a subflow stops the subflow node's
timeout and both runs' timeouts. Other nodes' own timeouts keep running.

`limit()` is asyncio's timeout following the clock: rescheduled to never while the
clock stands still, and to the time that was left when it starts again. Everything
here runs on the run's event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from time import monotonic


class Clock:
    def __init__(self, seconds: float, parent: Clock | None = None) -> None:
        self.seconds = seconds
        self.parent = parent
        self._left = float(seconds)  # seconds left when it last started (or stopped)
        self._since: float | None = monotonic()  # None while it stands still
        self._waits = 0  # person waits in progress below this clock
        self._timeouts: set[asyncio.Timeout] = set()

    def left(self) -> float | None:
        """Seconds left (negative once past), or None while it stands still."""
        if self._since is None:
            return None
        return self._left - (monotonic() - self._since)

    def expired(self) -> bool:
        left = self.left()
        return left is not None and left <= 0

    @contextmanager
    def waiting_for_a_person(self) -> Iterator[None]:
        """This clock and every clock above it stand still inside."""
        chain: list[Clock] = []
        clock: Clock | None = self
        while clock is not None:
            chain.append(clock)
            clock = clock.parent
        for each in chain:
            each._stop()
        try:
            yield
        finally:
            for each in chain:
                each._start()

    @asynccontextmanager
    async def limit(self) -> AsyncIterator[None]:
        """Raises TimeoutError in the block once the clock runs out."""
        async with asyncio.timeout_at(self._when()) as timeout:
            self._timeouts.add(timeout)
            try:
                yield
            finally:
                self._timeouts.discard(timeout)

    def _when(self) -> float | None:
        left = self.left()
        return None if left is None else asyncio.get_running_loop().time() + left

    def _stop(self) -> None:
        self._waits += 1
        if self._waits > 1:
            return
        left = self.left()
        assert left is not None  # it ran until now: no wait was in progress
        self._left, self._since = left, None
        self._reschedule()

    def _start(self) -> None:
        self._waits -= 1
        if self._waits > 0:
            return
        self._since = monotonic()
        self._reschedule()

    def _reschedule(self) -> None:
        when = self._when()
        for timeout in self._timeouts:
            if not timeout.expired():
                timeout.reschedule(when)
