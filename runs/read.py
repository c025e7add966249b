"""Reading runs and their stored events (access checked through the design)."""

from __future__ import annotations

import uuid
from typing import Any

from designs.actions import check_design_access
from designs.models import Design
from kionga.access import AnyUser
from kionga.errors import invalid_field, not_found
from kionga.snapshot import one_snapshot
from runner import protocol
from runs.models import Run, RunEvent

PAGE_SIZE = 200


def check_run_access(user: AnyUser, design_id: uuid.UUID, run_id: uuid.UUID,
                     min_role: str = "viewer") -> Run:
    design = check_design_access(user, design_id, min_role)
    run = Run.objects.filter(pk=run_id, design=design).first()
    if run is None:
        raise not_found("Run not found.")
    return run


def events_after(run: Run, after: int, limit: int = PAGE_SIZE) -> list[dict[str, Any]]:
    rows = RunEvent.objects.filter(run=run, seq__gt=after).order_by("seq")[:limit]
    return [row.data for row in rows]


def check_run_with_events(user: AnyUser, design_id: uuid.UUID,
                          run_id: uuid.UUID) -> dict[str, Any]:
    """A readable run with its stored events, row and events from one snapshot: never a
    terminal event beside a status the ingester has not committed yet (or the reverse)."""
    with one_snapshot():
        run = check_run_access(user, design_id, run_id)
        return {**run.to_dict(), "events": events_after(run, -1, limit=10_000)}


def check_events_page(user: AnyUser, design_id: uuid.UUID, run_id: uuid.UUID, after: int,
                      limit: int) -> dict[str, Any]:
    """A page of a readable run's stored events; `complete` from the same snapshot."""
    with one_snapshot():
        run = check_run_access(user, design_id, run_id)
        events = events_after(run, after, limit)
        last = events[-1]["seq"] if events else after
        done = run.status in protocol.FINAL_STATUSES and not RunEvent.objects.filter(
            run=run, seq__gt=last).exists()
    return {"events": events, "next_after": last, "complete": done}


def runs_of(design: Design, limit: int = 100) -> list[dict[str, Any]]:
    return [r.to_dict() for r in Run.objects.filter(design=design)[:limit]]


def parse_after(raw: str | None, *, strict: bool = True) -> int:
    """`?after=` must be an integer (400 otherwise); a garbled Last-Event-ID restarts."""
    if raw in (None, ""):
        return -1
    try:
        return max(int(str(raw)), -1)
    except ValueError:
        if strict:
            raise invalid_field("after", "A valid integer (a seq) is required.") from None
        return -1
