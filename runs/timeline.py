"""A run's stored events as a timeline people read: type, node, time since start, and a
short preview. Shown by the runs admin (ops staff) and the approver web UI."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils.dateparse import parse_datetime

from runs.models import Run, RunEvent

PREVIEW_CHARS = 200


@dataclass(frozen=True)
class TimelineRow:
    seq: int
    type: str
    node: str
    since_start: str
    preview: str


def timeline(run: Run) -> list[TimelineRow]:
    """The run's stored events in order (an empty list before the first is stored)."""
    events = list(RunEvent.objects.filter(run=run).order_by("seq"))
    if not events:
        return []
    start = _at(events[0]) or run.created_at
    return [TimelineRow(e.seq, e.type, _node(e), _since(e, start), _preview(e)) for e in events]


def _at(event: RunEvent) -> datetime | None:
    at = event.data.get("at") if isinstance(event.data, dict) else None
    return parse_datetime(at) if isinstance(at, str) else None


def _node(event: RunEvent) -> str:
    node = event.data.get("node_id") if isinstance(event.data, dict) else None
    return str(node) if node else ""


def _since(event: RunEvent, start: datetime) -> str:
    at = _at(event)
    return f"+{(at - start).total_seconds():.3f} s" if at is not None else ""


def _preview(event: RunEvent) -> str:
    """What the event says, short: its preview, else its error's message or its output."""
    data = event.data if isinstance(event.data, dict) else {}
    error = data.get("error")
    for value in (data.get("preview"), error.get("message") if isinstance(error, dict)
                  else None, data.get("output"), data.get("reason")):
        if isinstance(value, str) and value:
            return value[:PREVIEW_CHARS]
    return ""
