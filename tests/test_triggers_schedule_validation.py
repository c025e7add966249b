"""A schedule's cron expression and time zone are checked when they are set: a wrong
field or an unknown zone is 400 invalid_request naming `cron` or `timezone` with what is
wrong; a webhook has neither; beat's DatabaseScheduler reads a schedule as a crontab in
its zone."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django_celery_beat.schedulers import DatabaseScheduler

from kionga.celery import app
from kionga.models import Project
from tests.agent_key_helpers import deployed_agent
from tests.conftest import Api
from triggers.models import Trigger


@pytest.mark.parametrize(("cron", "says"), [
    ("* * * *", "Give five fields"),
    ("61 * * * *", "minute field '61'"),
    ("0 25 * * *", "hour field '25'"),
    ("0 9 0 * *", "day of month field '0'"),
    ("0 9 * 13 *", "month field '13'"),
    ("0 9 * * someday", "day of week field 'someday'"),
    ("*/0 * * * *", "minute field '*/0'"),
])
def test_a_wrong_cron_expression_is_refused_with_its_field(
        api: Api, carol: User, acme: Project, cron: str, says: str) -> None:
    agent = deployed_agent(carol, acme)
    refused = api.client_for(carol).post(f"/api/v1/agents/{agent.pk}/triggers", {
        "kind": "schedule", "name": "s", "cron": cron}, format="json")
    error = api.assert_error(refused, 400, "invalid_request")
    assert list(error["details"]["fields"]) == ["cron"]
    assert says in error["details"]["fields"]["cron"][0], error
    assert not Trigger.objects.exists()


@pytest.mark.parametrize("zone", ["Mars/Olympus", "../etc/passwd", "CET ", "/UTC"])
def test_an_unknown_time_zone_is_refused(api: Api, carol: User, acme: Project,
                                         zone: str) -> None:
    agent = deployed_agent(carol, acme)
    refused = api.client_for(carol).post(f"/api/v1/agents/{agent.pk}/triggers", {
        "kind": "schedule", "name": "s", "cron": "0 9 * * *", "timezone": zone},
        format="json")
    error = api.assert_error(refused, 400, "invalid_request")
    assert list(error["details"]["fields"]) == ["timezone"], error
    assert "IANA" in error["details"]["fields"]["timezone"][0]


def test_a_schedule_needs_cron_and_a_webhook_takes_none(
        api: Api, carol: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    editor = api.client_for(carol)
    base = f"/api/v1/agents/{agent.pk}/triggers"
    error = api.assert_error(editor.post(base, {"kind": "schedule", "name": "s"},
                                         format="json"), 400, "invalid_request")
    assert list(error["details"]["fields"]) == ["cron"]
    error = api.assert_error(editor.post(base, {"kind": "webhook", "name": "w",
                                                "cron": "0 9 * * *"}, format="json"),
                             400, "invalid_request")
    assert list(error["details"]["fields"]) == ["cron"]
    hook = editor.post(base, {"kind": "webhook", "name": "w"}, format="json").json()
    error = api.assert_error(editor.patch(f"{base}/{hook['id']}", {"timezone": "UTC"},
                                          format="json"), 400, "invalid_request")
    assert list(error["details"]["fields"]) == ["timezone"]
    made = editor.post(base, {"kind": "schedule", "name": "s", "cron": "0 9 * * *"},
                       format="json").json()
    error = api.assert_error(editor.patch(f"{base}/{made['id']}", {"cron": "0 9 * *"},
                                          format="json"), 400, "invalid_request")
    assert Trigger.objects.get(pk=made["id"]).cron == "0 9 * * *"


def test_beat_reads_a_schedule_in_its_time_zone(api: Api, carol: User,
                                                acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    made = api.client_for(carol).post(f"/api/v1/agents/{agent.pk}/triggers", {
        "kind": "schedule", "name": "s", "cron": "15 * * * 1-5",
        "timezone": "America/New_York"}, format="json").json()
    entries = DatabaseScheduler(app=app, lazy=True).all_as_schedule()
    entry = entries[f"trigger {made['id']}"]
    assert (entry.task, entry.args) == ("triggers.fire_schedule", [made["id"]])
    assert str(entry.schedule.tz) == "America/New_York"
    assert entry.schedule.minute == {15} and entry.schedule.hour == set(range(24))
    assert entry.schedule.day_of_week == {1, 2, 3, 4, 5}
