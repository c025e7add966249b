"""Overview and operations metrics against a hand-computed data set: buckets (empty hours
included), percentiles (percentile_cont's values, within the histogram's bound), totals,
the 168-hour range, tenancy. The rows are stored directly, then rolled up by the rebuild
(the end path's rollups: tests/test_operations_rollups.py)."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone

from approvals.models import ApprovalRequest
from deployments.models import Agent
from designs.models import Version
from evaluations.models import Evaluation
from kionga.models import Project
from operations.histogram import ABSOLUTE_MS, EPSILON
from operations.rollups import KEEP, do_rebuild
from runs.models import Run
from tests.operations_helpers import agent_of
from tests.versions_helpers import prompt_graph, published


def turn(agent: Agent, minutes_ago: float, status: str, latency: int, tokens: int,
         cost: str, error: str | None = None) -> None:
    run = Run.objects.create(
        project=agent.project, design=agent.design, agent=agent, version_id=str(agent.version_id),
        content_sha256="a" * 64, status=status, latency_ms=latency, tokens=tokens,
        cost=Decimal(cost), error={"code": error, "message": "x"} if error else None)
    Run.objects.filter(pk=run.pk).update(
        created_at=timezone.now() - timedelta(minutes=minutes_ago))


def data_set(carol: User, acme: Project, mallory: User, evil: Project) -> Agent:
    agent = agent_of(published(carol, acme, prompt_graph()), "agent-acme")
    for latency in (100, 200, 300, 400):  # the last hour: bucket 23
        turn(agent, 30, "completed", latency, 10, "0.25")
    turn(agent, 90, "failed", 50, 7, "0.5", "node_error")  # bucket 22
    turn(agent, 30 * 60, "completed", 1000, 1, "0")  # 30 h ago: only in the 168 h range
    other = agent_of(published(mallory, evil, prompt_graph()), "agent-evil")
    turn(other, 10, "failed", 5, 1, "9", "timeout")  # another tenant's: never counted
    do_rebuild(timezone.now() - KEEP)
    return agent


def near(latency: dict[str, float | None], p50: float, p95: float, p99: float) -> bool:
    """The estimates are within the documented bound of percentile_cont's values."""
    return all(value is not None and abs(value - exact) <= EPSILON * exact + ABSOLUTE_MS + 1e-3
               for value, exact in zip(latency.values(), (p50, p95, p99), strict=True))


def test_it_computes_24_hourly_buckets_and_totals(api: Any, carol: User, acme: Project,
                                                  mallory: User, evil: Project,
                                                  bob: User) -> None:
    agent = data_set(carol, acme, mallory, evil)
    page = api.client_for(bob).get(f"/api/v1/agents/{agent.pk}/operations").json()
    assert page["hours"] == 24
    assert page["totals"] == {**page["totals"], "requests": 5, "errors": 1,
                              "success_rate": 0.8, "tokens": 47, "cost": 1.5}
    assert near(page["totals"]["latency_ms"], 200, 380, 396)
    series = page["series"]
    assert len(series) == 24
    assert series[23] == {**series[23], "requests": 4, "errors": 0, "tokens": 40, "cost": 1.0}
    assert near(series[23]["latency_ms"], 250, 385, 397)
    assert series[22]["requests"] == 1 and series[22]["errors"] == 1
    assert near(series[22]["latency_ms"], 50, 50, 50)
    for empty in series[:22]:
        assert (empty["requests"], empty["errors"], empty["tokens"], empty["cost"]) == (0, 0, 0, 0)
        assert empty["latency_ms"] == {"p50": None, "p95": None, "p99": None}
    starts = [b["start"] for b in series]
    assert starts == sorted(starts) and len(set(starts)) == 24
    assert [t["status"] for t in page["recent_turns"]][:1] == ["completed"]
    assert len(page["recent_turns"]) == 6 and page["rollouts"][0]["version"] == 1
    assert page["siblings"] == []


def test_it_covers_168_hours_in_7_hour_buckets(api: Any, carol: User, acme: Project,
                                               mallory: User, evil: Project) -> None:
    agent = data_set(carol, acme, mallory, evil)
    page = api.client_for(carol).get(f"/api/v1/agents/{agent.pk}/operations?hours=168").json()
    assert page["totals"]["requests"] == 6 and page["totals"]["tokens"] == 48
    counts = [b["requests"] for b in page["series"]]
    # 30 h ago is (168 - 30) / 7 = 19.7 buckets in; the last 7 h are bucket 23.
    assert counts == [0] * 19 + [1, 0, 0, 0, 5]
    assert near(page["totals"]["latency_ms"], 250, 850, 970)  # 50,100,200,300,400,1000


def test_it_gives_the_project_overview(api: Any, carol: User, acme: Project, mallory: User,
                                       evil: Project, bob: User) -> None:
    data_set(carol, acme, mallory, evil)
    ApprovalRequest.objects.create(project=acme, node_id="ask", message="ok?",
                                   expires_at=timezone.now() + timedelta(minutes=5))
    for project, hours_ago in ((acme, 1), (acme, 25), (evil, 1)):  # only the first counts
        design = Version.objects.filter(design__project=project).first().design  # type: ignore[union-attr]
        evaluation = Evaluation.objects.create(project=project, design=design, revision=1,
                                               content_sha256="0" * 64)
        Evaluation.objects.filter(pk=evaluation.pk).update(
            created_at=timezone.now() - timedelta(hours=hours_ago))
    page = api.client_for(bob).get(f"/api/v1/agent-designs/overview?project_id={acme.pk}").json()
    assert (page["runs"], page["failed"], page["success_rate"]) == (5, 1, 0.8)
    assert page["failures_by_reason"] == {"node_error": 1}
    assert near(page["latency_ms"], 200, 380, 396)
    assert (page["tokens"], page["cost"], page["pending_approvals"]) == (47, 1.5, 1)
    assert page["agents"] == 1 and len(page["series"]) == 24
    assert page["evaluations"] == 1


def test_it_keeps_tenants_apart_and_checks_hours(api: Any, carol: User, acme: Project,
                                                 mallory: User, evil: Project) -> None:
    agent = data_set(carol, acme, mallory, evil)
    intruder = api.client_for(mallory)
    api.assert_error(intruder.get(f"/api/v1/agents/{agent.pk}/operations"), 404, "not_found")
    api.assert_error(intruder.get(f"/api/v1/agent-designs/overview?project_id={acme.pk}"),
                     404, "not_found")
    client = api.client_for(carol)
    for hours in ("0", "169", "x"):
        api.assert_error(client.get(f"/api/v1/agents/{agent.pk}/operations?hours={hours}"),
                         400, "invalid_request")
    api.assert_error(client.get("/api/v1/agent-designs/overview"), 400, "invalid_request")
    last_hour = client.get(f"/api/v1/agents/{agent.pk}/operations?hours=1").json()
    assert last_hour["totals"]["requests"] == 4 and last_hour["totals"]["success_rate"] == 1.0
    idle = agent_of(published(carol, acme, prompt_graph(), "Idle"), "agent-idle")
    empty = client.get(f"/api/v1/agents/{idle.pk}/operations").json()
    assert empty["totals"]["requests"] == 0 and empty["totals"]["success_rate"] is None
    assert empty["totals"]["latency_ms"] == {"p50": None, "p95": None, "p99": None}
