"""Deployed agents' turns the runtime never reported: the gateway ends them (`turn_lost`).

A turn is opened and reported by the agent runtime (runs/agent_turns.py); a pod killed,
evicted or cut off from the gateway in between never reports, and its turn would stay
`running` forever — a request the metrics count but never end. The engine ends every
turn within its graph's `timeout_seconds` plus the longest its approvals can keep it
waiting for people (the run's clock stands still meanwhile: runner.clock, and
runner.task_limits.person_waits bounds those waits), and the runtime then reports within
its HTTP client's timeout; so past that deadline plus GRACE nobody will report the turn.
The beat worker's sweep (`runs.end_lost_turns`) ends such a turn with status `failed`,
error code `turn_lost`, like the reaper ends a
run whose runner is gone: in the same transaction its pending approvals are cancelled,
its rollups count it (an error), and the end is audited (`run.finished`).

A report arriving after that is refused (409 `turn_lost`, runs/agent_turns.py): the
turn stays as the gateway ended it and is counted once.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, Final

from django.db import transaction
from django.utils import timezone

from contracts.registry import SETTINGS_RANGES
from designs.models import Version
from kionga.errors import ErrorCode
from runner.budgets import setting
from runner.task_limits import person_waits
from runs.lifecycle import do_finish_runs
from runs.models import ACTIVE_STATUSES, Run

TURN_LOST: Final[ErrorCode] = "turn_lost"
MESSAGE: Final = ("The agent runtime did not report the turn by its deadline (the graph's "
                  "timeout_seconds and a grace); the gateway ended it.")
# After the engine's timeout: stopping the graph, then the report's HTTP call (the
# runtime's client waits up to 30 s, agents/serve.py), with room for slow clocks.
GRACE: Final = timedelta(seconds=60)
# Turns ended per sweep (one transaction); the beat runs the next sweep seconds later.
SWEEP_BATCH: Final = 500
# Open turns looked at per sweep, oldest first (the oldest are the most overdue).
CANDIDATES: Final = 5_000
_SHORTEST: Final = timedelta(seconds=SETTINGS_RANGES["timeout_seconds"][0])


def turn_deadline(started_at: datetime, artifact: object) -> datetime:
    """When a turn of the version with this artifact is lost if still unreported."""
    artifact = artifact if isinstance(artifact, dict) else {}
    graph = _mapping(artifact.get("graph"))
    settings = _mapping(graph.get("settings"))
    subflows = {entry["version_id"]: entry["graph"] for entry in artifact.get("subflows") or []
                if isinstance(entry, dict) and "version_id" in entry and "graph" in entry}
    seconds = setting(settings, "timeout_seconds") + person_waits(graph, subflows)
    return started_at + timedelta(seconds=seconds) + GRACE


def _mapping(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def overdue_turns(now: datetime) -> list[str]:
    """IDs of open turns past their deadline (at most SWEEP_BATCH)."""
    open_turns = list(Run.objects.filter(
        agent__isnull=False, status__in=ACTIVE_STATUSES,
        started_at__lte=now - _SHORTEST - GRACE,
    ).order_by("started_at").values_list("pk", "version_id", "started_at")[:CANDIDATES])
    artifacts = _artifacts({version_id for _, version_id, _ in open_turns})
    return [str(pk) for pk, version_id, started_at in open_turns
            if started_at is not None  # filtered above; the column is nullable for runs
            and turn_deadline(started_at, artifacts.get(str(version_id))) <= now][:SWEEP_BATCH]


def _artifacts(version_ids: set[str]) -> dict[str, object]:
    """Each open turn's version artifact (its graph and the versions it reaches), once."""
    rows = Version.objects.filter(pk__in=version_ids).values_list("pk", "artifact")
    return {str(pk): value for pk, value in rows}


def do_end_lost_turns(now: datetime | None = None) -> int:
    """End the open turns past their deadline with `turn_lost`; returns how many this
    call ended. Idempotent: a turn ends once (its status guards it), and a turn whose
    report is being stored right now (row locked) is left to that report."""
    ids = overdue_turns(now or timezone.now())
    if not ids:
        return 0
    with transaction.atomic():
        turns = list(Run.objects.select_for_update(skip_locked=True).filter(
            pk__in=ids, status__in=ACTIVE_STATUSES))
        ended_at = timezone.now()
        for turn in turns:
            turn.status, turn.finished_at, turn.output = Run.Status.FAILED, ended_at, None
            turn.error = {"code": TURN_LOST, "message": MESSAGE}
        Run.objects.bulk_update(turns, ["status", "finished_at", "output", "error"])
        # Credentials (turns have none), approvals, rollups, audit: as any run's end.
        do_finish_runs(turns, free_slots=False)  # a turn holds no runner slot
    return len(turns)
