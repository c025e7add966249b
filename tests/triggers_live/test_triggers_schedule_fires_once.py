"""A schedule due now starts exactly one turn however often beat's task runs
(triggers/schedules.py).

A schedule made through the API for the current minute in Europe/Paris, with its
input; its task (`triggers.fire_schedule`, as beat sends it) sent twice at once to the
private stack's gateway worker: one turn of the agent, with the schedule's input, run
by the local runtime and recorded with the trigger and its due time."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from celery import Celery

from runs.models import Run
from tests.agent_local_helpers import until
from tests.conftest import Api
from tests.stack import Stack
from tests.trigger_helpers import deploy_locally, local_runtimes
from triggers.models import Firing
from triggers.schedules import QUEUE, TASK

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_due_schedule_fired_twice_starts_one_turn(
        stack: Stack, api: Api, alice: Any, acme: Any, settings: Any,
        agents_dir: Path) -> None:
    agent = deploy_locally(alice, acme, settings, agents_dir, "Scheduled: {input}")
    now = datetime.now(ZoneInfo("Europe/Paris"))
    created = api.client_for(alice).post(f"/api/v1/agents/{agent.pk}/triggers", {
        "kind": "schedule", "name": "morning", "cron": f"{now.minute} {now.hour} * * *",
        "timezone": "Europe/Paris", "input": "the day's summary"}, format="json")
    assert created.status_code == 201, created.content
    assert "secret" not in created.json()
    beat = Celery("beat-like", broker=stack.redis_url)
    with local_runtimes(stack, agents_dir, agent):
        for _ in range(2):
            beat.send_task(TASK, args=[created.json()["id"]], queue=QUEUE)
        turn = until(lambda: Run.objects.filter(agent=agent, status="completed").first())
        assert (turn.input, turn.output) == ("the day's summary",
                                             "Scheduled: the day's summary")
        time.sleep(2)  # the second task's moment to start a turn, were it to
        assert Run.objects.filter(agent=agent).count() == 1
        firing = Firing.objects.get(turn=turn)
        due = datetime.fromisoformat(firing.delivery_id)
        assert str(firing.trigger_id) == created.json()["id"]
        assert due.astimezone(ZoneInfo("Europe/Paris")).replace(second=0, microsecond=0) \
            == now.replace(second=0, microsecond=0)
