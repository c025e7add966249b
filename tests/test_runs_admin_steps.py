"""The admin's run page lists the run's steps (node records), each linked to its own
read-only page with the whole record."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client

from kionga.models import Project
from runs.models import NodeRecord
from tests.approvals_helpers import waiting_run


def test_the_run_page_links_each_step(alice: User, acme: Project, staff: Client) -> None:
    run = waiting_run(alice, acme)
    step = NodeRecord.objects.create(
        run=run, node_id="m1", attempt=2, status="completed", tokens=15, duration_ms=840,
        data={"node_id": "m1", "attempt": 2, "status": "completed",
              "output": {"port": "out", "type": "text", "value": "the <answer>"},
              "usage": {"tokens": 15, "cost": 0.02}, "started_at": "2026-01-01T00:00:00+00:00"})
    page = staff.get(f"/admin/runs/run/{run.pk}/change/").content.decode()
    assert f'href="/admin/runs/noderecord/{step.pk}/change/">m1</a>' in page
    assert "<td>15</td><td>0.02</td><td>840</td>" in page
    shown = staff.get(f"/admin/runs/noderecord/{step.pk}/change/")
    assert shown.status_code == 200
    body = shown.content.decode()
    assert "the &lt;answer&gt;" in body and f"/admin/runs/run/{run.pk}/change/" in body
    assert staff.post(f"/admin/runs/noderecord/{step.pk}/delete/").status_code == 403
