"""A deployed agent's turns: opened and reported by its runtime (agents/serve.py).

Each turn is a Run row with `agent` set: the resources and approvals it calls are
scoped, billed and listed like a run's (runs.agent_auth), and operations metrics read
them (operations/metrics.py). The runtime reports the end: status, output, error,
latency and tokens; cost is the gateway's: model resources billed per predict at their
prices, plus the platform model's tokens at KIONGA_LLM_PRICE_PER_1K.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from deployments.models import Agent, Rollout
from designs.models import Version
from kionga.errors import APIError
from runs.lost_turns import TURN_LOST
from runs.models import ACTIVE_STATUSES, Run
from runs.nested import run_resources
from runs.signals import runs_ended

COST_PLACES = Decimal("0.000001")


def check_rolled_out(agent: Agent, version_id: str) -> Version:
    """A version the agent was rolled out with (its pods may still serve the previous
    version during a rollout), or 403 resource_denied."""
    rolled_out = Rollout.objects.filter(agent=agent, version_id__in=_uuid(version_id))
    version = Version.objects.filter(pk__in=rolled_out.values("version_id")).first()
    if version is None:
        raise APIError(403, "resource_denied",
                       "This agent was never deployed with that version.")
    return version


def version_fields(version: Version) -> dict[str, Any]:
    """What a turn records of the version it runs: its ID, hash and callable resources."""
    artifact = version.artifact
    return {"version_id": str(version.pk), "content_sha256": version.content_sha256,
            "resources": run_resources(artifact["graph"], artifact.get("subflows", []))}


def do_open_turn(agent: Agent, version_id: str, input: str, session_id: str) -> Run:
    """A running turn of a version the agent was rolled out with."""
    version = check_rolled_out(agent, version_id)
    return Run.objects.create(
        project_id=agent.project_id, design_id=agent.design_id, status=Run.Status.RUNNING,
        input=input, session_id=session_id, allow_side_effects=True, agent=agent,
        started_at=timezone.now(), **version_fields(version))


@dataclass(frozen=True)
class TurnReport:
    status: str
    latency_ms: int
    tokens: int
    output: str | None = None
    error: dict[str, str] | None = None


def do_report_turn(agent: Agent, turn_id: Any, report: TurnReport) -> Run:
    with transaction.atomic():
        turn = Run.objects.select_for_update().filter(pk=turn_id, agent=agent).first()
        if turn is None:
            raise APIError(404, "not_found", "This agent has no such turn.")
        if turn.status not in ACTIVE_STATUSES:
            raise _ended(turn)
        # Model resources billed their tokens as they answered; the rest of the engine's
        # count is the platform model's.
        platform_tokens = max(report.tokens - turn.tokens, 0)
        price = Decimal(settings.KIONGA_LLM_PRICE_PER_1K)
        turn.cost = (turn.cost + platform_tokens * price / 1000).quantize(COST_PLACES)
        turn.tokens = max(turn.tokens, report.tokens)
        turn.status, turn.latency_ms = report.status, report.latency_ms
        turn.output = report.output if report.status == Run.Status.COMPLETED else None
        turn.error = report.error if report.status == Run.Status.FAILED else None
        turn.finished_at = timezone.now()
        turn.save(update_fields=["cost", "tokens", "status", "latency_ms", "output", "error",
                                 "finished_at"])
        runs_ended.send(sender=Run, runs=[turn])
    return turn


def _ended(turn: Run) -> APIError:
    """The answer to a report of a turn that has ended: reported already, or ended by the
    gateway at its deadline (runs/lost_turns.py) — then the report is not recorded."""
    if isinstance(turn.error, dict) and turn.error.get("code") == TURN_LOST:
        return APIError(409, TURN_LOST, "The gateway ended this turn at its deadline "
                        "(turn_lost) before it was reported; this report was not recorded.")
    return APIError(409, "run_not_active", "This turn was already reported.")


def _uuid(text: str) -> list[str]:
    import uuid

    try:
        return [str(uuid.UUID(text))]
    except ValueError:
        return []
