"""During a canary the agent's operations answer (and its admin dashboard) shows each
version's turns, errors, latency p50/p95, tokens and cost side by side, counted by the
version that served each turn: through the end path (turns ending one by one) and the
rebuild alike; the agent's totals stay the sum of both."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from deployments.models import Agent
from designs.models import Version
from kionga.models import Project
from operations.histogram import ABSOLUTE_MS, EPSILON
from operations.rollups import KEEP, do_rebuild, do_roll_up_ended
from runs.models import Run
from tests.operations_helpers import agent_of
from tests.versions_helpers import prompt_graph, publish, published, save


def canary_agent(alice: User, acme: Project) -> tuple[Agent, Version, Version]:
    v1 = published(alice, acme, prompt_graph("one {input}"))
    save(alice, v1.design, prompt_graph("two {input}"))
    v2 = publish(alice, v1.design)
    agent = agent_of(v1, "agent-canary")
    agent.canary_version, agent.canary_percent = v2, 20
    agent.save()
    return agent, v1, v2


def end_turn(agent: Agent, version: Version, status: str, latency: int, tokens: int,
             cost: str) -> Run:
    run = Run.objects.create(
        project=agent.project, design=agent.design, agent=agent, version_id=str(version.pk),
        content_sha256=version.content_sha256, status=status, latency_ms=latency,
        tokens=tokens, cost=Decimal(cost), finished_at=timezone.now(),
        error={"code": "node_error", "message": "x"} if status == "failed" else None)
    do_roll_up_ended([run])  # what a reported turn does (runs_ended)
    return run


def near(value: float | None, exact: float) -> bool:
    return value is not None and abs(value - exact) <= EPSILON * exact + ABSOLUTE_MS + 1e-3


def check_side_by_side(page: dict[str, Any], v1: Version, v2: Version) -> None:
    current, canary = page["versions"]
    assert (current["role"], current["version_id"], current["percent"]) == (
        "current", str(v1.pk), None)
    assert (canary["role"], canary["version_id"], canary["percent"]) == ("canary", str(v2.pk), 20)
    assert (current["requests"], current["errors"], current["tokens"]) == (8, 0, 80)
    assert (canary["requests"], canary["errors"], canary["tokens"]) == (2, 1, 40)
    assert current["cost"] == pytest.approx(0.8) and canary["cost"] == pytest.approx(1.0)
    assert current["success_rate"] == 1.0 and canary["success_rate"] == 0.5
    # v1: 100..800 ms; v2: 1000 and 3000 ms (percentile_cont's values).
    assert near(current["latency_ms"]["p50"], 450) and near(current["latency_ms"]["p95"], 765)
    assert near(canary["latency_ms"]["p50"], 2000) and near(canary["latency_ms"]["p95"], 2900)
    assert page["totals"]["requests"] == 10 and page["totals"]["errors"] == 1


def test_each_version_is_measured_by_the_turns_it_served(api: Any, alice: User, bob: User,
                                                         acme: Project) -> None:
    agent, v1, v2 = canary_agent(alice, acme)
    for latency in range(100, 900, 100):
        end_turn(agent, v1, "completed", latency, 10, "0.1")
    end_turn(agent, v2, "completed", 1000, 20, "0.5")
    end_turn(agent, v2, "failed", 3000, 20, "0.5")
    page = api.client_for(bob).get(f"/api/v1/agents/{agent.pk}/operations").json()
    check_side_by_side(page, v1, v2)

    # The rebuild from the runs keys the rollups the same way.
    do_rebuild(timezone.now() - KEEP)
    check_side_by_side(api.client_for(bob).get(f"/api/v1/agents/{agent.pk}/operations").json(),
                       v1, v2)


def test_without_a_canary_only_the_version_is_listed(api: Any, alice: User,
                                                     acme: Project) -> None:
    agent, v1, v2 = canary_agent(alice, acme)
    end_turn(agent, v2, "completed", 100, 1, "0")
    Agent.objects.filter(pk=agent.pk).update(version=v2, canary_version=None,
                                             canary_percent=None)
    page = api.client_for(alice).get(f"/api/v1/agents/{agent.pk}/operations").json()
    assert [(v["role"], v["version"], v["requests"]) for v in page["versions"]] == [
        ("current", 2, 1)]


def test_the_admin_dashboard_shows_both_versions(alice: User, acme: Project,
                                                 staff: Client) -> None:
    agent, v1, v2 = canary_agent(alice, acme)
    end_turn(agent, v1, "completed", 100, 10, "0.1")
    end_turn(agent, v2, "failed", 200, 20, "0.5")
    page = staff.get(reverse("admin:operations_agentoperations_change", args=[agent.pk]))
    assert page.status_code == 200
    html = page.content.decode()
    table = html[html.index('id="ops-versions"'):]
    table = table[:table.index("</table>")]
    assert '<tr data-role="current"><td>current</td><td>1 ' in table
    assert '<tr data-role="canary"><td>canary</td><td>2 ' in table
    assert "<td>20 %</td>" in table and "<td>the rest</td>" in table
