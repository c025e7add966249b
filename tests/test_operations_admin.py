"""Ops pages in the admin: agents with their rollout timelines, credentials revoked by an
audited action, and the operations dashboards per project and per agent (charts rendered
on the server without scripts, the same figures as a table, links to the failing runs);
staff only."""

from __future__ import annotations

import re
import uuid
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from deployments.credentials import issue_credential
from deployments.models import Agent, AgentCredential
from kionga.models import AuditEvent, Project
from operations.rollups import KEEP, do_rebuild
from runs.models import Run
from tests.operations_helpers import agent_of
from tests.versions_helpers import prompt_graph, published


@pytest.fixture
def agent(carol: User, acme: Project) -> Agent:
    agent = agent_of(published(carol, acme, prompt_graph()), "agent-acme")
    for status, latency, error in (("completed", 120, None), ("completed", 180, None),
                                   ("failed", 40, {"code": "node_error", "message": "x"})):
        Run.objects.create(project=acme, design=agent.design, agent=agent,
                           version_id=str(agent.version_id), content_sha256="a" * 64,
                           status=status, latency_ms=latency, tokens=10, cost=Decimal("0.5"),
                           error=error)
    do_rebuild(timezone.now() - KEEP)
    return agent


def svg_values(page: str) -> list[str]:
    return re.findall(r'<desc class="value">([^<]*)</desc>', page)


def inline_scripts(page: str) -> list[str]:
    return re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", page)


def test_the_project_dashboard_charts_its_runs(staff: Client, agent: Agent,
                                               acme: Project) -> None:
    page = staff.get(f"/admin/operations/projectoperations/{acme.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    assert html.count("class=\"pygal-chart\"") == 5 and inline_scripts(html) == []
    for title in ("Latency (ms)", "Requests and errors", "Error rate (%)", "Tokens", "Cost"):
        assert f">{title}<" in html
    values = svg_values(html)
    assert "3" in values and "1" in values  # this hour's requests and errors
    assert "33.3 %" in values and "30" in values and "1.5000" in values
    assert re.search(r'data-figure="requests">3<', html)
    assert re.search(r'data-figure="success_rate">67 %<', html)
    assert f"project__id__exact={acme.pk}&amp;status__exact=failed&amp;failure=node_error" in html
    assert f"/admin/operations/agentoperations/{agent.pk}/change/" in html
    listing = staff.get("/admin/operations/projectoperations/").content.decode()
    assert f"/admin/operations/projectoperations/{acme.pk}/change/" in listing


def test_the_agent_dashboard_links_its_failing_turns(staff: Client, agent: Agent) -> None:
    page = staff.get(f"/admin/operations/agentoperations/{agent.pk}/change/?hours=168")
    assert page.status_code == 200
    html = page.content.decode()
    assert '<strong aria-current="page">168 h</strong>' in html
    assert html.count("class=\"pygal-chart\"") == 5 and inline_scripts(html) == []
    failed = Run.objects.get(agent=agent, status="failed")
    assert f"/admin/runs/run/{failed.pk}/change/" in html
    failing = f"/admin/runs/run/?agent__id__exact={agent.pk}&status__exact=failed"
    assert failing.replace("&", "&amp;") in html
    listed = staff.get(failing).content.decode()
    assert set(re.findall(r"/admin/runs/run/([0-9a-f-]{36})/change/", listed)) == {
        str(failed.pk)}
    assert "<h2>Rollouts</h2>" in html and "carol" not in html  # created without a user
    assert staff.get("/admin/operations/agentoperations/?q=agent-acme").status_code == 200
    assert staff.get(f"/admin/operations/agentoperations/{uuid.uuid4()}/change/"
                     ).status_code == 404


def test_agents_show_their_rollout_timeline_and_revoke_credentials(
        staff: Client, agent: Agent) -> None:
    issue_credential(agent)
    page = staff.get(f"/admin/deployments/agent/{agent.pk}/change/").content.decode()
    assert "Rollout timeline" in page and agent.version.content_sha256[:12] in page
    assert "1 live" in page and 'name="_save"' not in page  # read-only
    assert staff.get("/admin/deployments/agent/").status_code == 200
    credential = AgentCredential.objects.get(agent=agent)
    staff.post("/admin/deployments/agentcredential/",
               {"action": "revoke", "_selected_action": [credential.pk]})
    credential.refresh_from_db()
    assert credential.revoked_at is not None
    assert AuditEvent.objects.filter(action="agent.credential_revoked",
                                     target_id=str(agent.pk)).count() == 1


@pytest.mark.parametrize("url", ["/admin/operations/projectoperations/{project}/change/",
                                 "/admin/operations/agentoperations/{agent}/change/",
                                 "/admin/deployments/agent/{agent}/change/"])
def test_only_staff_see_the_ops_pages(url: str, alice: User, agent: Agent,
                                      acme: Project) -> None:
    target = url.format(project=acme.pk, agent=agent.pk)
    member = Client()
    member.force_login(alice)  # a project admin, not staff
    for client in (member, Client()):
        answer: Any = client.get(target)
        assert answer.status_code == 302 and "/admin/login/" in answer["Location"]
