"""The demo's SQLite keeps no operations rollups (their SQL is PostgreSQL's): the metrics
routes answer 503 with a clear message instead of failing, the admin dashboards say so,
and runs still end without a rollup being written."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from kionga.models import Project
from operations import rollups
from operations.models import Rollup
from runs.models import Run
from runs.signals import runs_ended
from tests.conftest import Api
from tests.test_operations_metrics import data_set

pytestmark = pytest.mark.django_db


@pytest.fixture
def on_sqlite(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rollups.connection, "vendor", "sqlite")


@pytest.mark.allow_output  # Django's request logger reports each 503 answer
def test_metrics_routes_answer_503_without_postgresql(api: Api, carol: User, acme: Project,
                                                     mallory: User, evil: Project,
                                                     on_sqlite: None) -> None:
    agent = data_set(carol, acme, mallory, evil)
    client = api.client_for(carol)
    for url in (f"/api/v1/agent-designs/overview?project_id={acme.pk}",
                f"/api/v1/agents/{agent.pk}/operations"):
        error = api.assert_error(client.get(url), 503, "service_unavailable")
        assert "PostgreSQL" in error["message"], error
    # Tenancy first: another project's agent is still a 404, not a 503.
    api.assert_error(api.client_for(mallory).get(f"/api/v1/agents/{agent.pk}/operations"),
                     404, "not_found")


def test_runs_end_without_rollups_and_dashboards_say_why(staff: Client, carol: User,
                                                        acme: Project, mallory: User,
                                                        evil: Project, on_sqlite: Any) -> None:
    data_set(carol, acme, mallory, evil)
    before = Rollup.objects.count()
    runs_ended.send(sender=Run, runs=list(Run.objects.all()))
    assert Rollup.objects.count() == before
    response = staff.get(f"/admin/operations/projectoperations/{acme.pk}/change/", follow=True)
    assert response.status_code == 200
    assert b"need PostgreSQL" in response.content
