"""What the admin's operations dashboards show (operations/admin.py renders it).

The figures are the API's (operations.metrics over the rollups) for a window of 1 to 168
hours; links lead to the runs admin filtered to the failing runs.
"""

from __future__ import annotations

from typing import Any, Final
from urllib.parse import urlencode

from django.urls import reverse

from approvals.models import ApprovalRequest
from deployments.agents import rollouts_of
from deployments.models import Agent
from kionga.models import Project
from operations.charts import charts, error_rate
from operations.metrics import Scope, evaluations_started, failures_by_reason, series
from operations.read import versions
from operations.serializers import MAX_HOURS
from runs.models import Run

WINDOWS: Final = (1, 6, 24, 72, MAX_HOURS)
DEFAULT_HOURS: Final = 24
FAILED_TURNS: Final = 10


def hours_of(raw: str | None) -> int:
    """The ?hours= of a dashboard: one of WINDOWS, else the default."""
    return int(raw) if raw in {str(h) for h in WINDOWS} else DEFAULT_HOURS


def runs_url(**filters: Any) -> str:
    return f"{reverse('admin:runs_run_changelist')}?{urlencode(filters)}"


def _figures(scope: Scope, hours: int) -> dict[str, Any]:
    window, totals, buckets = series(scope, hours)
    rows = [{**b, "error_rate": error_rate(b)} for b in buckets]
    latency = totals["latency_ms"]
    return {"hours": hours, "windows": WINDOWS, "window": window, "totals": totals,
            "percentiles": [(name.upper(), latency[name]) for name in ("p50", "p95", "p99")],
            "buckets": rows, "charts": charts(buckets, hours)}


def project_dashboard(project: Project, hours: int) -> dict[str, Any]:
    figures = _figures(Scope(project.pk), hours)
    failing = {"project__id__exact": project.pk, "status__exact": Run.Status.FAILED}
    agents = Agent.objects.filter(project=project).select_related("version", "design")
    return {
        **figures, "scope": "project",
        "failures": [{"code": code, "count": count, "url": runs_url(**failing, failure=code)}
                     for code, count in failures_by_reason(project.pk, figures["window"])
                     .items()],
        "failing_runs_url": runs_url(**failing),
        "evaluations": evaluations_started(project.pk, figures["window"].start),
        "pending_approvals": ApprovalRequest.objects.filter(
            project=project, status=ApprovalRequest.Status.PENDING).count(),
        "agents": [{"agent": agent, "url": reverse("admin:operations_agentoperations_change",
                                                   args=[agent.pk])}
                   for agent in agents.order_by("name")[:100]],
    }


def agent_dashboard(agent: Agent, hours: int) -> dict[str, Any]:
    failing = {"agent__id__exact": agent.pk, "status__exact": Run.Status.FAILED}
    failed = (Run.objects.filter(agent=agent, status=Run.Status.FAILED)
              .order_by("-created_at").only("id", "created_at", "error", "latency_ms")
              [:FAILED_TURNS])
    return {
        **_figures(Scope(agent.project_id, agent.pk), hours), "scope": "agent",
        "failing_runs_url": runs_url(**failing),
        "failed_turns": [{"run": run, "code": _code(run.error),
                          "url": reverse("admin:runs_run_change", args=[run.pk])}
                         for run in failed],
        "rollouts": rollouts_of(agent),
        "versions": versions(agent, hours),
        "agent_admin_url": f"{reverse('admin:deployments_agent_changelist')}?"
                           f"{urlencode({'q': agent.pk})}",
        "project_url": reverse("admin:operations_projectoperations_change",
                               args=[agent.project_id]),
    }


def _code(error: Any) -> str:
    return str(error.get("code", "")) if isinstance(error, dict) else ""
