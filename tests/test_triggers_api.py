"""An agent's triggers in the API: editors create a webhook (its secret in that answer
only, stored encrypted) or a schedule, change, disable and delete them; viewers read;
another project's agent or trigger is a 404; every change is audited, never with the
secret."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import connection
from django_celery_beat.models import PeriodicTask

from kionga.models import AuditEvent, Project
from tests.agent_key_helpers import deployed_agent
from tests.conftest import Api
from triggers.models import Trigger


def url(agent: Any, trigger_id: Any = None) -> str:
    base = f"/api/v1/agents/{agent.pk}/triggers"
    return base if trigger_id is None else f"{base}/{trigger_id}"


def test_a_webhooks_secret_is_shown_once_and_stored_encrypted(
        api: Api, carol: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    made = api.client_for(carol).post(url(agent), {"kind": "webhook", "name": "orders"},
                                      format="json")
    assert made.status_code == 201, made.content
    body = made.json()
    secret = body["secret"]
    assert secret.startswith("whsec_") and len(secret) > 40
    assert body["path"] == f"/api/v1/hooks/{body['id']}" and body["enabled"] is True
    with connection.cursor() as cursor:
        cursor.execute("SELECT secret FROM triggers_trigger WHERE id = %s", [body["id"]])
        stored = cursor.fetchone()[0]
    assert secret not in stored and stored.startswith("kx1.")
    assert Trigger.objects.get(pk=body["id"]).secret == secret
    for read in (api.client_for(carol).get(url(agent)), api.client_for(carol).get(
            url(agent, body["id"]))):
        assert read.status_code == 200 and secret not in read.content.decode()
    event = AuditEvent.objects.get(action="agent.trigger_created")
    assert event.details["trigger_id"] == body["id"] and secret not in str(event.details)


def test_an_editor_changes_disables_and_deletes_a_schedule(
        api: Api, carol: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    editor = api.client_for(carol)
    made = editor.post(url(agent), {"kind": "schedule", "name": "nightly",
                                    "cron": "0 2 * * *", "input": "tidy up"},
                       format="json").json()
    assert (made["cron"], made["timezone"], made["input"]) == ("0 2 * * *", "UTC", "tidy up")
    task = PeriodicTask.objects.get(name=f"trigger {made['id']}")
    assert task.enabled and task.task == "triggers.fire_schedule"
    changed = editor.patch(url(agent, made["id"]), {"cron": "30 6 * * mon-fri",
                                                    "timezone": "Asia/Tokyo",
                                                    "enabled": False}, format="json")
    assert changed.status_code == 200, changed.content
    assert (changed.json()["cron"], changed.json()["enabled"]) == ("30 6 * * mon-fri", False)
    task.refresh_from_db()
    assert not task.enabled and str(task.crontab.timezone) == "Asia/Tokyo"
    assert (task.crontab.minute, task.crontab.hour, task.crontab.day_of_week) == (
        "30", "6", "mon-fri")
    event = AuditEvent.objects.get(action="agent.trigger_updated")
    assert event.details["before"]["enabled"] is True and event.details["after"] == {
        "cron": "30 6 * * mon-fri", "timezone": "Asia/Tokyo", "enabled": False}
    assert editor.delete(url(agent, made["id"])).status_code == 204
    assert not Trigger.objects.exists() and not PeriodicTask.objects.filter(
        name=f"trigger {made['id']}").exists()
    assert AuditEvent.objects.filter(action="agent.trigger_deleted").count() == 1


def test_a_viewer_reads_but_does_not_edit(api: Api, carol: User, bob: User,
                                           acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    made = api.client_for(carol).post(url(agent), {"kind": "webhook", "name": "a"},
                                      format="json").json()
    viewer = api.client_for(bob)
    assert [t["id"] for t in viewer.get(url(agent)).json()["triggers"]] == [made["id"]]
    assert viewer.get(url(agent, made["id"])).json()["firings"] == []
    api.assert_error(viewer.post(url(agent), {"kind": "webhook", "name": "b"},
                                 format="json"), 403, "forbidden")
    api.assert_error(viewer.patch(url(agent, made["id"]), {"enabled": False},
                                  format="json"), 403, "forbidden")
    api.assert_error(viewer.delete(url(agent, made["id"])), 403, "forbidden")
    assert Trigger.objects.get().enabled


def test_another_projects_agent_and_trigger_are_not_found(
        api: Api, carol: User, mallory: User, acme: Project, evil: Project) -> None:
    agent = deployed_agent(carol, acme)
    made = api.client_for(carol).post(url(agent), {"kind": "webhook", "name": "a"},
                                      format="json").json()
    other = api.client_for(mallory)
    api.assert_error(other.get(url(agent)), 404, "not_found")
    api.assert_error(other.get(url(agent, made["id"])), 404, "not_found")
    api.assert_error(other.patch(url(agent, made["id"]), {"enabled": False}, format="json"),
                     404, "not_found")
    api.assert_error(other.delete(url(agent, made["id"])), 404, "not_found")
    # Through an agent of mallory's own: alice's trigger is still not found.
    own = deployed_agent(mallory, evil, "evil-agent")
    api.assert_error(other.get(url(own, made["id"])), 404, "not_found")
    api.assert_error(other.delete(url(own, made["id"])), 404, "not_found")
    assert Trigger.objects.get().enabled
