"""Node records: what each node attempt of a run took, gave, cost and how long it took.

Not events (run-event.v1 stays as it is): the scheduler hands one record per node
attempt to `record` (the worker's sink writes it to the ingest stream as a record
entry, runner/protocol.py record_fields; the gateway stores it beside the run's
events). Every value in a record is redacted as events are (runner.redact) and bounded
by the same limit as a run's output (LIMITS["output_bytes"], 64 KiB of JSON): a value
past it is kept as the head of its JSON text with `truncated` set, and a value that
held a secret is kept with `redacted` set. Neither can feed a re-run (runs/replay.py):
only an exact value may stand in for a node's call.

A record (a JSON object):
    node_id, attempt, kind, status (completed | failed | reused),
    inputs: [{source, type, value, truncated, redacted}],
    output: {port, type, value, truncated, redacted} | null,
    error: {code, message} | null,
    started_at, ended_at (ISO 8601), duration_ms, usage: {tokens, cost},
    reused_from: the run whose record a reused node repeats, or null
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from contracts.registry import LIMITS
from contracts.text import storable
from contracts.types import PortType
from runner.protocol import now_iso
from runner.redact import Redactor, truncate_bytes

Record = dict[str, Any]
RecordFn = Callable[[Record], None]

VALUE_BYTES: Final = LIMITS["output_bytes"]
STATUSES: Final = ("completed", "failed", "reused")
# A record's output gets VALUE_BYTES, its inputs share as much: with the rest of it, a
# record entry is never longer than this (the gateway refuses a longer one).
MAX_RECORD_BYTES: Final = 3 * VALUE_BYTES


@dataclass(frozen=True)
class Reused:
    """A node's recorded outcome, repeated instead of running it (a re-run), or a
    designer's pinned output (`from_run` None)."""

    port: str
    value: Any
    from_run: str | None


def recorded_value(redactor: Redactor, value: Any, vtype: str,
                   limit: int = VALUE_BYTES) -> dict[str, Any]:
    """A value as records keep it: redacted, at most `limit` bytes of JSON, flagged."""
    clean = _redacted(redactor, value)
    encoded = json.dumps(clean, ensure_ascii=False)
    kept: dict[str, Any] = {"type": vtype, "value": clean, "truncated": False,
                            "redacted": clean != value}
    if len(encoded.encode("utf-8")) > limit:
        kept["value"] = truncate_bytes(clean if isinstance(clean, str) else encoded, limit)
        kept["truncated"] = True
    return kept


def _redacted(redactor: Redactor, value: Any) -> Any:
    """Every string of a JSON value redacted (keys too), its shape kept."""
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, list):
        return [_redacted(redactor, item) for item in value]
    if isinstance(value, dict):
        return {redactor.redact(str(k)): _redacted(redactor, v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float):
        return value
    return redactor.redact(str(value))


class Recorder:
    """Times each node attempt and hands its record to `record` (None: records off)."""

    def __init__(self, record: RecordFn | None, redactor: Redactor) -> None:
        self._record = record
        self._redactor = redactor
        self._started: dict[tuple[str, int], tuple[str, float, list[dict[str, Any]]]] = {}

    @property
    def enabled(self) -> bool:
        return self._record is not None

    def start(self, node_id: str, attempt: int, inputs: list[tuple[str, Any, PortType]]) -> None:
        if self._record is None:
            return
        share = VALUE_BYTES // max(len(inputs), 1)
        kept = [{"source": source, **recorded_value(self._redactor, value, vtype, share)}
                for source, value, vtype in inputs]
        self._started[(node_id, attempt)] = (now_iso(), time.monotonic(), kept)

    def finish(self, node_id: str, kind: str, attempt: int, *, status: str,
               port: str | None = None, value: Any = None, vtype: str = "text",
               error: dict[str, str] | None = None, tokens: int = 0, cost: float = 0.0,
               reused_from: str | None = None) -> None:
        if self._record is None:
            return
        started_at, began, inputs = self._started.pop(
            (node_id, attempt), (now_iso(), time.monotonic(), []))
        output = None
        if port is not None:
            output = {"port": port, **recorded_value(self._redactor, value, vtype)}
        record: Record = {
            "node_id": node_id, "attempt": attempt, "kind": kind, "status": status,
            "inputs": inputs, "output": output, "error": error,
            "started_at": started_at, "ended_at": now_iso(),
            "duration_ms": round((time.monotonic() - began) * 1000),
            "usage": {"tokens": tokens, "cost": cost}, "reused_from": reused_from,
        }
        try:
            self._record(storable(record))
        except Exception:  # noqa: BLE001 - records are a view of the run, never its cause
            self._record = None
