"""How many event streams one gateway process serves: per user, and in all.

A live stream holds one Redis connection while it waits (XREAD BLOCK), so the
process's async Redis pool is sized for KIONGA_MAX_STREAMS and some room for other
commands (kionga.redis_client). Without caps, one viewer opening a hundred streams
took every pooled connection and another tenant's stream found none. A stream beyond
the user's share is 429 ``too_many_streams``; beyond the process's budget it is 503
``streams_at_capacity``.

Counted in the process, not in Redis: streams are served by one event loop per
process, which is exactly what holds the connections, and a crashed process leaves no
count behind. With several gateway workers a user may hold a share in each.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable

from django.conf import settings

from kionga.errors import APIError

Release = Callable[[], None]


class StreamBudget:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._per_user: Counter[int] = Counter()
        # Places given back, settled under the lock by the next open or check. A
        # release never takes the lock: it may run from a finalizer, which the cyclic
        # garbage collector calls in whichever thread it interrupts, and that thread
        # may be inside open() holding the lock (a lock taken there would never be
        # given: the gateway's thread hung, and every request after it on that worker).
        self._given_back: deque[int] = deque()

    def open(self, user_id: int) -> Release:
        """Count one stream of user_id, or refuse it; returns its (idempotent) release."""
        with self._lock:
            self._settle()
            self._check(user_id)
            self._per_user[user_id] += 1
        place = [user_id]  # emptied by the first release: list.pop is atomic

        def release() -> None:
            try:
                self._given_back.append(place.pop())
            except IndexError:
                pass  # given back already

        return release

    def check(self, user_id: int) -> None:
        """Refuse as open() would now, without counting anything (a HEAD of a stream)."""
        with self._lock:
            self._settle()
            self._check(user_id)

    def open_count(self) -> int:
        """Streams counted now, places given back included (for tests and metrics)."""
        with self._lock:
            self._settle()
            return self._per_user.total()

    def _settle(self) -> None:
        while self._given_back:
            user_id = self._given_back.popleft()
            self._per_user[user_id] -= 1
            if self._per_user[user_id] <= 0:
                del self._per_user[user_id]

    def _check(self, user_id: int) -> None:
        per_user, total = settings.KIONGA_MAX_STREAMS_PER_USER, settings.KIONGA_MAX_STREAMS
        if self._per_user[user_id] >= per_user:
            raise APIError(429, "too_many_streams",
                           f"You already follow {per_user} event streams; close one "
                           "first (KIONGA_MAX_STREAMS_PER_USER).",
                           {"max_streams_per_user": per_user})
        if self._per_user.total() >= total:
            raise APIError(503, "streams_at_capacity",
                           "This gateway serves as many event streams as it can; try "
                           "again shortly or read the events as JSON pages.",
                           {"max_streams": total})


BUDGET = StreamBudget()


async def counted(stream: AsyncIterator[bytes],
                  release: Release) -> AsyncGenerator[bytes, None]:
    """`stream`, releasing its place when it ends, fails or the client goes away (and
    closing `stream` then: its own cleanup runs now, not when it is collected)."""
    try:
        async for chunk in stream:
            yield chunk
    finally:
        release()
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
