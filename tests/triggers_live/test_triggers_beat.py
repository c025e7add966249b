"""Beat itself starts a schedule's turns (triggers/schedules.py, DatabaseScheduler): a
real `celery beat` process with the product's settings, against the private stack,
reads the schedule an editor made through the API ('* * * * *' in Asia/Kolkata) and
sends its task when it is due; the stack's worker starts the turn and the local runtime
runs it, recorded with the trigger and its due minute.

Beat counts a schedule's next minute from its last send, which it stores on the
schedule's row (PeriodicTask.last_run_at; a new one counts from its creation). The test
dates that send a minute back, as if beat had sent the schedule a minute ago: the
current minute is then due at once, instead of at the next minute boundary (up to
60 s away)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from runs.models import Run
from tests.agent_local_helpers import until
from tests.conftest import Api
from tests.stack import ROOT, VENV_BIN, Stack
from tests.trigger_helpers import deploy_locally, local_runtimes
from triggers.models import Firing, Trigger

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def beat(stack: Stack, tmp_path: Path) -> Iterator[None]:
    log = (tmp_path / "beat.log").open("wb")
    process = subprocess.Popen(
        [str(VENV_BIN / "celery"), "-A", "kionga", "beat", "--loglevel", "INFO",
         "--schedule", str(tmp_path / "unused")], cwd=ROOT, env=stack.env(), stdout=log,
        stderr=subprocess.STDOUT)
    try:
        yield
    finally:
        process.terminate()
        process.wait(timeout=20)
        log.close()


def test_beat_sends_a_due_schedule_and_its_turn_runs(
        stack: Stack, api: Api, alice: Any, acme: Any, settings: Any, agents_dir: Path,
        beat: None) -> None:
    agent = deploy_locally(alice, acme, settings, agents_dir, "Beat: {input}")
    made = api.client_for(alice).post(f"/api/v1/agents/{agent.pk}/triggers", {
        "kind": "schedule", "name": "every minute", "cron": "* * * * *",
        "timezone": "Asia/Kolkata", "input": "tick"}, format="json")
    assert made.status_code == 201, made.content
    task = Trigger.objects.get(pk=made.json()["id"]).periodic_task
    assert task is not None
    task.last_run_at = timezone.now() - timedelta(minutes=1)
    task.save()  # tells beat its schedule changed (PeriodicTasks), so it reads the row again
    with local_runtimes(stack, agents_dir, agent):
        turn = until(lambda: Run.objects.filter(agent=agent, status="completed").first(),
                     seconds=90)
        assert (turn.input, turn.output) == ("tick", "Beat: tick")
        firing = Firing.objects.get(turn=turn)
        assert str(firing.trigger_id) == made.json()["id"]
        assert firing.delivery_id.endswith(":00+00:00")  # a due minute, in UTC
