"""Runs in the admin for ops staff: filters, search by ID, a read-only run page with its
event timeline and a link to its approvals; the design page links to its runs."""

from __future__ import annotations

import re
from typing import Any

from django.contrib.auth.models import User
from django.test import Client

from kionga.models import Project
from runs.models import Run, RunEvent
from tests.approvals_helpers import pending, waiting_run

RUNS = "/admin/runs/run/"


def failed_run(user: User, project: Project, code: str) -> Run:
    run = waiting_run(user, project)
    Run.objects.filter(pk=run.pk).update(status="failed",
                                         error={"code": code, "message": "It broke."})
    return Run.objects.get(pk=run.pk)


def _listed(client: Client, query: str) -> set[str]:
    page = client.get(RUNS + query)
    assert page.status_code == 200, page.content[:500]
    return set(re.findall(r'/admin/runs/run/([0-9a-f-]{36})/change/', page.content.decode()))


def test_it_filters_and_searches_runs(alice: User, acme: Project, mallory: User,
                                      evil: Project, staff: Client) -> None:
    lost, broken = failed_run(alice, acme, "runner_lost"), failed_run(alice, acme, "timeout")
    waiting = waiting_run(alice, acme)
    theirs = waiting_run(mallory, evil)
    Run.objects.filter(pk=theirs.pk).update(version_id="v-123")
    assert _listed(staff, "") == {str(r.pk) for r in (lost, broken, waiting, theirs)}
    assert _listed(staff, f"?project__id__exact={evil.pk}") == {str(theirs.pk)}
    assert _listed(staff, f"?design__id__exact={waiting.design_id}") == {str(waiting.pk)}
    assert _listed(staff, "?status__exact=waiting") == {str(waiting.pk), str(theirs.pk)}
    assert _listed(staff, "?failure=runner_lost") == {str(lost.pk)}
    assert _listed(staff, "?version=v-123") == {str(theirs.pk)}
    assert _listed(staff, "?version=none") == {str(r.pk) for r in (lost, broken, waiting)}
    assert _listed(staff, f"?created_at__year={lost.created_at.year}") == _listed(staff, "")
    assert _listed(staff, "?created_at__year=2000") == set()
    assert _listed(staff, f"?q={str(broken.pk)[:13]}") == {str(broken.pk)}


def test_it_shows_a_run_with_its_timeline_read_only(alice: User, acme: Project,
                                                    staff: Client) -> None:
    run = failed_run(alice, acme, "node_error")
    Run.objects.filter(pk=run.pk).update(input="the question", output=None, tokens=42)
    timeline: list[tuple[int, str, dict[str, Any]]] = [
        (0, "run.started", {"at": "2026-01-01T10:00:00.000000+00:00"}),
        (1, "node.completed", {"at": "2026-01-01T10:00:01.250000+00:00",
                               "node_id": "draft", "preview": "a first draft"}),
        (2, "run.failed", {"at": "2026-01-01T10:00:02.000000+00:00",
                           "error": {"code": "node_error", "message": "It broke."}}),
    ]
    for seq, kind, data in timeline:
        RunEvent.objects.create(run=run, seq=seq, type=kind, data={"type": kind, **data})
    approval = pending(run)
    page = staff.get(f"{RUNS}{run.pk}/change/")
    assert page.status_code == 200
    html = page.content.decode()
    for text in ("the question", "It broke.", "42 tokens", "node.completed", "draft",
                 "+1.250 s", "a first draft", "+2.000 s",
                 f"/admin/approvals/approvalrequest/?run__id__exact={run.pk}"):
        assert text in html, text
    assert 'name="_save"' not in html
    assert staff.get(f"{RUNS}add/").status_code == 403
    assert staff.post(f"{RUNS}{run.pk}/delete/", {"post": "yes"}).status_code == 403
    linked = staff.get(f"/admin/approvals/approvalrequest/?run__id__exact={run.pk}")
    assert linked.status_code == 200 and str(approval.pk) in linked.content.decode()


def test_it_links_a_design_to_its_runs(alice: User, acme: Project, staff: Client) -> None:
    run = waiting_run(alice, acme)
    page = staff.get(f"/admin/designs/design/{run.design_id}/change/")
    assert f"/admin/runs/run/?design__id__exact={run.design_id}" in page.content.decode()
