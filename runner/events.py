"""Run events (run-event.v1): seq, timestamps, ordered delivery, the terminal event.

The engine produces events synchronously (`event()` never awaits), so producing an
event never yields to another node and seq order is creation order. Delivery to the
caller's `emit` is either direct (a plain function) or through one writer task (a
coroutine function), which keeps delivery in seq order even when `emit` awaits.
Stored events get consecutive seqs. node.delta is live only and never stored, so it
takes no seq of its own: it repeats the seq of the last stored event and carries a
`delta_index` (SSE frames without an id keep the previous resume point).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

log = logging.getLogger(__name__)

Event = dict[str, Any]
EmitFn = Callable[[Event], Awaitable[None] | None]

TERMINAL_TYPES = frozenset({"run.completed", "run.failed", "run.cancelled"})


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


class Emitter:
    """Assigns seq and `at`, delivers in order, and goes quiet after the terminal event."""

    def __init__(self, emit: EmitFn | None) -> None:
        self._emit = emit
        self.seq = -1  # seq of the last stored event
        self.stored = 0
        self.closed = False
        self._async = _is_async(emit)
        self._queue: deque[Event | Awaitable[None]] = deque()
        self._wake: asyncio.Event | None = None
        self._writer: asyncio.Task[None] | None = None
        self._deltas: dict[str, int] = {}

    def event(self, type_: str, **fields: Any) -> None:
        if self.closed:
            return  # nothing follows the terminal event, whatever is still unwinding
        self.seq += 1
        self.stored += 1
        event: Event = {"seq": self.seq, "type": type_, "at": now_iso()}
        event.update(fields)
        if type_ in TERMINAL_TYPES:
            self.closed = True
        self._deliver(event)

    def delta(self, node_id: str, attempt: int, text: str) -> None:
        if self.closed or not text:
            return
        index = self._deltas.get(node_id, 0)
        self._deltas[node_id] = index + 1
        self._deliver({
            "seq": max(self.seq, 0), "type": "node.delta", "at": now_iso(),
            "node_id": node_id, "attempt": attempt, "delta": text, "delta_index": index,
        })

    def reset_deltas(self, node_id: str) -> None:
        """A retried model node streams again from delta_index 0."""
        self._deltas.pop(node_id, None)

    def _deliver(self, event: Event) -> None:
        if self._emit is None:
            return
        if not self._async:
            try:
                result = self._emit(event)
            except Exception:  # a broken sink must not take the run down with it
                log.exception("emit failed for %s", event.get("type"))
                return
            if result is None or not inspect.isawaitable(result):
                return
            # A plain callable that returned an awaitable: from now on deliver through
            # the writer so later events cannot overtake this one.
            self._async = True
            self._enqueue(result)
            return
        self._enqueue(event)

    def _enqueue(self, item: Event | Awaitable[None]) -> None:
        self._queue.append(item)
        if self._writer is None:
            self._wake = asyncio.Event()
            self._writer = asyncio.get_running_loop().create_task(self._write())
        assert self._wake is not None
        self._wake.set()

    async def _write(self) -> None:
        assert self._wake is not None and self._emit is not None
        while True:
            while self._queue:
                item = self._queue.popleft()
                try:
                    if isinstance(item, dict):
                        result = self._emit(item)
                        if result is not None and inspect.isawaitable(result):
                            await result
                    else:
                        await item
                except Exception:
                    log.exception("emit failed")
            if self.closed:
                return
            self._wake.clear()
            await self._wake.wait()

    async def drain(self) -> None:
        """Wait until every event (the terminal one included) reached `emit`."""
        if self._writer is not None:
            if self._wake is not None:
                self._wake.set()
            await asyncio.shield(self._writer)


class ForwardingEmitter(Emitter):
    """The emitter of a nested (subflow/map/loop) run.

    Its node IDs mean nothing in the parent's graph, so only approval events go up,
    re-attributed to the parent's node: the gateway needs them to show the run as
    waiting and to link the request.
    """

    def __init__(self, parent: Emitter, node_id: str) -> None:
        super().__init__(None)
        self._parent = parent
        self._node_id = node_id

    def event(self, type_: str, **fields: Any) -> None:
        if type_.startswith("approval."):
            fields["node_id"] = self._node_id
            self._parent.event(type_, **fields)

    def delta(self, node_id: str, attempt: int, text: str) -> None:
        return None


def _is_async(emit: EmitFn | None) -> bool:
    if emit is None:
        return False
    return inspect.iscoroutinefunction(emit) or inspect.iscoroutinefunction(
        getattr(emit, "__call__", None)  # noqa: B004 - callable objects with async __call__
    )
