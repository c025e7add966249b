"""What model calls add to their runs' tokens and cost, committed in groups.

Every model call the internal listener answers adds to its run's totals before it
answers (so a `done` is never sent for a bill that is not stored). One UPDATE per
call cost a thread hop and a round trip each; here the bills of calls that end
while a write is under way wait for it, then go together in the next one: one
prepared statement per group, each run's bills of the group summed into one row
change, added to what the row holds (so concurrent writers, other processes'
included, lose nothing). A caller awaits its group's commit; a failed write is
every one of its callers' error, as a failed UPDATE of its own would be.
"""

from __future__ import annotations

import asyncio
import uuid
import weakref
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Final

from kionga import prepared_sql
from runs.loop_view import in_thread
from runs.models import Run

_ADD: Final = f"""
UPDATE {Run._meta.db_table} r SET tokens = r.tokens + b.tokens, cost = r.cost + b.cost
FROM unnest(%b::uuid[], %b::bigint[], %b::numeric[]) AS b(id, tokens, cost)
WHERE r.id = b.id
"""


@dataclass
class _Group:
    """The bills waiting for the next write: per run, tokens and cost."""

    done: asyncio.Future[None]
    totals: dict[uuid.UUID, tuple[int, Decimal]] = field(default_factory=dict)

    def add(self, run_id: uuid.UUID, tokens: int, cost: Decimal) -> None:
        before = self.totals.get(run_id, (0, Decimal(0)))
        self.totals[run_id] = (before[0] + tokens, before[1] + cost)


class GroupCommit:
    """The bills of one event loop: at most one write at a time, the next group
    gathering meanwhile."""

    def __init__(self) -> None:
        self._open: _Group | None = None
        self._writer: asyncio.Task[None] | None = None

    async def add(self, run_id: uuid.UUID, tokens: int, cost: Decimal) -> None:
        if self._open is None:
            self._open = _Group(asyncio.get_running_loop().create_future())
        group = self._open
        group.add(run_id, tokens, cost)
        if self._writer is None:
            self._writer = asyncio.get_running_loop().create_task(self._write())
        # Shielded: a caller that goes away (its client hung up) leaves the group's
        # write to finish for the others; its own bill is stored all the same.
        await asyncio.shield(group.done)

    async def _write(self) -> None:
        try:
            while self._open is not None:
                group, self._open = self._open, None
                try:
                    await in_thread(_store)(group.totals)
                except Exception as exc:
                    group.done.set_exception(exc)
                except BaseException:
                    group.done.cancel()
                    raise
                else:
                    group.done.set_result(None)
        finally:
            self._writer = None
            if self._open is not None:  # cancelled (the loop is closing): nobody waits in vain
                self._open.done.cancel()
                self._open = None


def _store(totals: dict[uuid.UUID, tuple[int, Decimal]]) -> None:
    # In the runs' order: two writers' row locks are then taken in one order.
    ids = sorted(totals)
    prepared_sql.execute(_ADD, [ids, [totals[i][0] for i in ids], [totals[i][1] for i in ids]])


_COMMITS: Final[weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, GroupCommit]] = \
    weakref.WeakKeyDictionary()


async def add(run_id: uuid.UUID, tokens: int, cost: Decimal) -> None:
    """Add tokens and cost to the run's totals; returns once they are committed."""
    loop = asyncio.get_running_loop()
    commit = _COMMITS.get(loop)
    if commit is None:
        commit = _COMMITS[loop] = GroupCommit()
    await commit.add(run_id, tokens, cost)
