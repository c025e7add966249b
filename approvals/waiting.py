"""A run's long poll of its approval request, on the internal listener's event loop.

A waiting poll holds no thread and no database connection: it waits on a future that
the loop's one watcher completes. The watcher reads, every WATCH_SECONDS while any
poll waits, which of the awaited requests are no longer pending (or past their
deadline) in one query for all of them, in one of kionga.pooled's threads. A decision
taken on the public listener thus reaches the waiting run within WATCH_SECONDS,
whatever the number of waiting runs (docs/decisions/parked-approval-runs.md).
"""

from __future__ import annotations

import asyncio
import uuid
import weakref
from typing import Final

from django.db.models import Q
from django.utils import timezone

from approvals.models import ApprovalRequest
from runs.loop_view import in_thread

# How often the watcher looks; the most a poll may ask to wait.
WATCH_SECONDS: Final = 0.25
MAX_WAIT_SECONDS: Final = 25.0


def settled(ids: list[uuid.UUID]) -> list[uuid.UUID]:
    """Which of the requests are decided, ended or past their deadline."""
    return list(ApprovalRequest.objects.filter(pk__in=ids).filter(
        ~Q(status=ApprovalRequest.Status.PENDING) | Q(expires_at__lte=timezone.now())
    ).values_list("pk", flat=True))


class Watcher:
    """The waiting polls of one event loop, by request."""

    def __init__(self) -> None:
        self._waiters: dict[uuid.UUID, set[asyncio.Future[None]]] = {}
        self._task: asyncio.Task[None] | None = None

    @property
    def waiting(self) -> int:
        return sum(len(futures) for futures in self._waiters.values())

    async def wait(self, approval_id: uuid.UUID, seconds: float) -> None:
        """Until the request is settled, `seconds` at most."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.setdefault(approval_id, set()).add(future)
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._watch())
        try:
            await asyncio.wait_for(future, seconds)
        except TimeoutError:
            pass
        finally:
            futures = self._waiters.get(approval_id, set())
            futures.discard(future)
            if not futures:
                self._waiters.pop(approval_id, None)

    async def _watch(self) -> None:
        while self._waiters:
            await asyncio.sleep(WATCH_SECONDS)
            try:
                done = await in_thread(settled)(list(self._waiters))
            except Exception:  # noqa: BLE001 - the database away: the polls time out
                continue
            for approval_id in done:
                for future in self._waiters.get(approval_id, set()):
                    if not future.done():
                        future.set_result(None)


_watchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Watcher] = (
    weakref.WeakKeyDictionary())


def watcher() -> Watcher:
    """The running loop's watcher."""
    loop = asyncio.get_running_loop()
    found = _watchers.get(loop)
    if found is None:
        found = _watchers[loop] = Watcher()
    return found


async def until_settled(approval_id: uuid.UUID, seconds: float) -> None:
    await watcher().wait(approval_id, min(seconds, MAX_WAIT_SECONDS))
