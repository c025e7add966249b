"""Ops staff edit agents' triggers in the admin through the API's actions: a schedule's
cron and time zone checked as in the API (a wrong one shown on the form, nothing
saved), saved with beat's row, disabled by the action, never showing a webhook's
secret; each change audited."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client
from django_celery_beat.models import PeriodicTask

from kionga.models import AuditEvent, Project
from tests.agent_key_helpers import deployed_agent
from triggers.actions import do_create
from triggers.firings import do_fire
from triggers.models import Trigger


def test_staff_edit_a_schedule_and_disable_a_webhook(staff: Client, carol: User,
                                                     acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    hook = do_create(carol, agent, {"kind": "webhook", "name": "orders"})
    schedule = do_create(carol, agent, {"kind": "schedule", "name": "nightly",
                                        "cron": "0 2 * * *"})
    listing = staff.get("/admin/triggers/trigger/").content.decode()
    assert "orders" in listing and "nightly" in listing and hook["secret"] not in listing
    page = f"/admin/triggers/trigger/{schedule['id']}/change/"
    form = {"name": "nightly", "enabled": "on", "cron": "0 25 * * *", "timezone": "UTC",
            "input": ""}
    refused = staff.post(page, form).content.decode()
    assert "The hour field &#x27;25&#x27; is not valid" in refused
    assert Trigger.objects.get(pk=schedule["id"]).cron == "0 2 * * *"
    assert staff.post(page, {**form, "cron": "0 3 * * *", "timezone": "Europe/Oslo"}
                      ).status_code == 302
    task = PeriodicTask.objects.get(name=f"trigger {schedule['id']}")
    assert (task.crontab.hour, str(task.crontab.timezone)) == ("3", "Europe/Oslo")
    detail = staff.get(f"/admin/triggers/trigger/{hook['id']}/change/").content.decode()
    assert hook["secret"] not in detail and 'name="cron"' not in detail
    staff.post("/admin/triggers/trigger/", {"action": "disable",
                                            "_selected_action": [hook["id"]]})
    assert not Trigger.objects.get(pk=hook["id"]).enabled
    events = AuditEvent.objects.filter(action="agent.trigger_updated")
    assert events.count() == 2 and all(e.actor and e.actor.username == "ops" for e in events)
    # Beat's rows are written from triggers only: their own pages are not in the admin.
    assert staff.get("/admin/django_celery_beat/periodictask/").status_code == 404


def test_only_staff_change_triggers(alice: User, carol: User, acme: Project) -> None:
    hook = do_create(carol, deployed_agent(carol, acme), {"kind": "webhook", "name": "a"})
    client = Client()
    client.force_login(alice)  # the project's admin, not ops staff
    assert client.get("/admin/triggers/trigger/").status_code == 302
    client.post("/admin/triggers/trigger/", {"action": "disable",
                                             "_selected_action": [hook["id"]]})
    assert Trigger.objects.get(pk=hook["id"]).enabled


def test_staff_see_which_delivery_started_each_turn(staff: Client, carol: User,
                                                    acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    made = do_create(carol, agent, {"kind": "webhook", "name": "orders"})
    firing, _ = do_fire(Trigger.objects.select_related("agent__version").get(pk=made["id"]),
                        "evt_77", "{}")
    page = staff.get("/admin/triggers/firing/").content.decode()
    assert "evt_77" in page and str(firing.turn_id) in page and "orders" in page
