"""The overview of a project and the operations page of an agent (API and admin)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from django.utils import timezone

from approvals.models import ApprovalRequest
from deployments.agents import rollouts_of
from deployments.models import Agent
from designs.models import Version
from kionga.models import Project
from operations.metrics import (
    Scope,
    evaluations_started,
    failures_by_reason,
    per_version,
    series,
)
from runs.models import Run

OVERVIEW_HOURS: Final = 24
RECENT_TURNS: Final = 20


def overview(project: Project, now: datetime | None = None) -> dict[str, Any]:
    end = now or timezone.now()
    window, totals, buckets = series(Scope(project.pk), OVERVIEW_HOURS, end)
    return {
        "project_id": project.pk, "hours": OVERVIEW_HOURS, "from": window.start.isoformat(),
        "to": end.isoformat(), "runs": totals["requests"],
        "success_rate": totals["success_rate"], "failed": totals["errors"],
        "failures_by_reason": failures_by_reason(project.pk, window),
        "latency_ms": totals["latency_ms"], "tokens": totals["tokens"], "cost": totals["cost"],
        "evaluations": evaluations_started(project.pk, window.start),
        "pending_approvals": ApprovalRequest.objects.filter(
            project=project, status=ApprovalRequest.Status.PENDING).count(),
        "agents": Agent.objects.filter(project=project).count(),
        "series": buckets,
    }


def operations(agent: Agent, hours: int, now: datetime | None = None) -> dict[str, Any]:
    end = now or timezone.now()
    window, totals, buckets = series(Scope(agent.project_id, agent.pk), hours, end)
    recent = (Run.objects.filter(agent=agent).order_by("-created_at")
              .only("id", "status", "created_at", "latency_ms", "tokens", "cost", "error",
                    "version_id")[:RECENT_TURNS])
    siblings = (Agent.objects.filter(project_id=agent.project_id).exclude(pk=agent.pk)
                .select_related("version", "design").order_by("-updated_at")[:50])
    return {
        "agent": agent.summary(), "hours": hours,
        "from": window.start.isoformat(), "to": end.isoformat(),
        "totals": {"requests": totals["requests"], "errors": totals["errors"],
                   "success_rate": totals["success_rate"], "latency_ms": totals["latency_ms"],
                   "tokens": totals["tokens"], "cost": totals["cost"]},
        "series": buckets,
        "versions": versions(agent, hours, end),
        "recent_turns": [_turn(run) for run in recent],
        "rollouts": rollouts_of(agent),
        "siblings": [{"id": str(s.pk), "name": s.name, "design_id": str(s.design_id),
                      "design_name": s.design.name, "version": s.version.number,
                      "updated_at": s.updated_at.isoformat()} for s in siblings],
    }


def versions(agent: Agent, hours: int, now: datetime | None = None) -> list[dict[str, Any]]:
    """The agent's version and, during a canary, the canary's: each one's totals over the
    window (the turns it served), side by side."""
    served: list[tuple[str, Version, int | None]] = [("current", agent.version, None)]
    if agent.canary_version is not None:
        served.append(("canary", agent.canary_version, agent.canary_percent))
    totals = per_version(Scope(agent.project_id, agent.pk), [str(v.pk) for _, v, _ in served],
                         hours, now)
    return [{"role": role, "version_id": str(version.pk), "version": version.number,
             "content_sha256": version.content_sha256, "percent": percent,
             **totals[str(version.pk)]} for role, version, percent in served]


def _turn(run: Run) -> dict[str, Any]:
    return {"id": str(run.pk), "status": run.status, "created_at": run.created_at.isoformat(),
            "version_id": run.version_id or None, "latency_ms": run.latency_ms,
            "tokens": run.tokens, "cost": float(run.cost),
            "error": (run.error or {}).get("code") if isinstance(run.error, dict) else None}
