"""Run events (run-event.v1): seq, timestamps, storable text, the terminal event.

The engine produces events synchronously (`event()` never awaits), so producing an
event never yields to another node and seq order is creation order; `emit` is a
plain function called in that order (the production sink only buffers). Every event
is made storable here, the one place all events pass: no U+0000, no unpaired
surrogate, no NaN (PostgreSQL and Redis refuse them; see contracts.text).
Stored events get consecutive seqs. node.delta is live only and never stored, so it
takes no seq of its own: it repeats the seq of the last stored event and carries a
`delta_index` (SSE frames without an id keep the previous resume point).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final

from contracts.text import storable
from runner.protocol import TERMINAL_TYPES, now_iso

log = logging.getLogger(__name__)

Event = dict[str, Any]
EmitFn = Callable[[Event], None]

# run.failed's reason when the run's events could not be written (emit or sink failed).
EVENTS_LOST: Final = "events_lost"


class Emitter:
    """Assigns seq and `at`, delivers in order, and goes quiet after the terminal event.

    An exception from `emit` means events are being lost: the run must not go on
    (its side effects would be invisible), so `failure` is set and `on_failure`
    called; the engine then stops the graph and ends the run as failed.
    """

    def __init__(self, emit: EmitFn | None,
                 on_failure: Callable[[], None] | None = None) -> None:
        self._emit = emit
        self._on_failure = on_failure
        self.seq = -1  # seq of the last stored event
        self.stored = 0
        self.closed = False
        self.failure: str | None = None  # why emit failed, for the run's error message
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
        try:
            self._emit(storable(event))
        except Exception as exc:
            if self.failure is not None:
                return  # logged once; the run is stopping
            log.exception("emit failed for %s", event.get("type"))
            self.failure = f"the run's events could not be written ({type(exc).__name__})"
            if self._on_failure is not None:
                self._on_failure()

    def failed(self) -> str | None:
        """Why events are being lost (the run must stop), or None."""
        return self.failure


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

    def failed(self) -> str | None:
        return self._parent.failed()

