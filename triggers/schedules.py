"""Schedules: a cron expression and a time zone per trigger, fired by Celery beat
(docs/decisions/agent-schedules-with-celery-beat.md).

Each schedule trigger owns one django-celery-beat PeriodicTask (task
`triggers.fire_schedule`, the trigger's ID as its argument) on a CrontabSchedule in the
trigger's time zone; beat's DatabaseScheduler reads them. When the task runs it works
out the due time it answers — the latest minute at or before now that the expression
matches in the time zone, no further back than LATE_LIMIT — and fires once per due time
(triggers.firings: the due time is the firing's delivery ID), so beat sending it twice,
or a retry, starts one turn. Matching follows celery's crontab, which beat uses: all
five fields must match (day of month AND day of week).
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Final
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from celery.schedules import crontab
from django.utils import timezone
from django_celery_beat.models import CrontabSchedule, PeriodicTask

from kionga.errors import invalid_field
from triggers.firings import do_fire
from triggers.models import Trigger

FIELDS: Final = ("minute", "hour", "day_of_month", "month_of_year", "day_of_week")
TASK: Final = "triggers.fire_schedule"
QUEUE: Final = "gateway"
# A task that runs later than this after its due minute (a worker down, a long queue)
# starts nothing: the turn would answer a moment long gone.
LATE_LIMIT: Final = timedelta(minutes=10)
MAX_CRON: Final = 100


def check_cron(expression: str) -> crontab:
    """The expression as celery's crontab, or 400 on `cron` saying which field is wrong."""
    parts = expression.split()
    if len(parts) != len(FIELDS) or len(expression) > MAX_CRON:
        raise invalid_field("cron", "Give five fields: minute hour day-of-month month "
                                    "day-of-week (e.g. '0 9 * * mon-fri').")
    for name, part in zip(FIELDS, parts, strict=True):
        try:
            crontab(**{name: part})
        except (ValueError, TypeError, IndexError) as exc:
            label = name.replace("_", " ").replace("of year", "")
            raise invalid_field("cron", f"The {label.strip()} field '{part}' is not valid: "
                                        f"{exc}") from None
    return crontab(**dict(zip(FIELDS, parts, strict=True)))


def check_timezone(name: str) -> ZoneInfo:
    """The IANA time zone, or 400 on `timezone`."""
    try:
        if not name or name != name.strip() or name.startswith(("/", ".")):
            raise ValueError(name)
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise invalid_field("timezone", f"'{name}' is not a time zone: give an IANA name "
                                        "such as 'UTC' or 'Europe/Paris'.") from None


def latest_due(expression: str, zone: str, now: datetime) -> datetime | None:
    """The latest minute at or before `now` the schedule fires in its zone (UTC), or
    None when there is none within LATE_LIMIT."""
    schedule, tz = check_cron(expression), ZoneInfo(zone)
    minute = now.astimezone(tz).replace(second=0, microsecond=0)
    for _ in range(int(LATE_LIMIT.total_seconds() // 60) + 1):
        local = minute.astimezone(tz)
        if (local.minute in schedule.minute and local.hour in schedule.hour
                and local.day in schedule.day_of_month
                and local.month in schedule.month_of_year
                and local.isoweekday() % 7 in schedule.day_of_week):
            return minute.astimezone(ZoneInfo("UTC"))
        minute -= timedelta(minutes=1)
    return None


def do_fire_schedule(trigger_id: str, now: datetime | None = None) -> str | None:
    """The turn started for the due time (or the one started before for it), or None."""
    trigger = (Trigger.objects.select_related("agent__version")
               .filter(pk=trigger_id, kind=Trigger.Kind.SCHEDULE, enabled=True).first())
    if trigger is None:
        return None
    due = latest_due(trigger.cron, trigger.timezone, now or timezone.now())
    if due is None:
        return None
    firing, _ = do_fire(trigger, due.isoformat(), trigger.input)
    return str(firing.turn_id)


def sync_periodic_task(trigger: Trigger) -> None:
    """Make beat's row say what the trigger says (schedule, time zone, enabled)."""
    minute, hour, day_of_month, month_of_year, day_of_week = trigger.cron.split()
    schedule, _ = CrontabSchedule.objects.get_or_create(
        minute=minute, hour=hour, day_of_month=day_of_month, month_of_year=month_of_year,
        day_of_week=day_of_week, timezone=trigger.timezone)
    task = trigger.periodic_task or PeriodicTask(name=f"trigger {trigger.pk}", task=TASK,
                                                 queue=QUEUE)
    task.crontab, task.interval = schedule, None
    task.args = json.dumps([str(trigger.pk)])
    task.enabled = trigger.enabled
    task.description = f"Schedule '{trigger.name}' of agent {trigger.agent.name}"
    task.save()
    if trigger.periodic_task_id != task.pk:
        trigger.periodic_task = task
        Trigger.objects.filter(pk=trigger.pk).update(periodic_task=task)
