"""A schedule's task starts one turn per due time (triggers/schedules.py): run twice in
the same minute, or a minute late, it finds the same due minute and the first turn; a
later due minute starts another; nothing starts when the task runs long after its due
time or the schedule is disabled."""

from __future__ import annotations

from datetime import UTC, datetime

from django.contrib.auth.models import User

from kionga.models import Project
from runs.models import Run
from tests.agent_key_helpers import deployed_agent
from triggers.actions import do_create
from triggers.models import Firing, Trigger
from triggers.schedules import do_fire_schedule


def test_one_turn_per_due_time(carol: User, acme: Project) -> None:
    agent = deployed_agent(carol, acme)
    # 09:00 in Paris on 2026-07-01 is 07:00 UTC (summer time).
    made = do_create(carol, agent, {"kind": "schedule", "name": "s", "cron": "0 9 * * *",
                                    "timezone": "Europe/Paris", "input": "go"})
    first = do_fire_schedule(made["id"], datetime(2026, 7, 1, 7, 0, 3, tzinfo=UTC))
    assert first is not None
    assert do_fire_schedule(made["id"], datetime(2026, 7, 1, 7, 0, 40, tzinfo=UTC)) == first
    assert do_fire_schedule(made["id"], datetime(2026, 7, 1, 7, 4, 0, tzinfo=UTC)) == first
    turn = Run.objects.get(pk=first)
    assert (turn.status, turn.input, turn.agent_id) == ("queued", "go", agent.pk)
    assert Firing.objects.get().delivery_id == "2026-07-01T07:00:00+00:00"
    # Not due: 08:00 UTC is 10:00 in Paris, an hour after; too late for 09:00.
    assert do_fire_schedule(made["id"], datetime(2026, 7, 1, 8, 0, 0, tzinfo=UTC)) is None
    second = do_fire_schedule(made["id"], datetime(2026, 7, 2, 7, 0, 1, tzinfo=UTC))
    assert second not in (None, first)
    Trigger.objects.filter(pk=made["id"]).update(enabled=False)
    assert do_fire_schedule(made["id"], datetime(2026, 7, 3, 7, 0, 1, tzinfo=UTC)) is None
    assert Run.objects.filter(agent=agent).count() == 2
