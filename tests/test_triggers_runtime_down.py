"""A triggered turn whose runtime does not take it: handing it over fails so the task is
retried (RuntimeNotReached) while the turn stays queued; a turn claimed meanwhile is
left alone; past its deadline the lost-turns sweep ends it `turn_lost`, as a turn
whose pod died."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from contracts.agent_runtime import LOCAL_PORT
from kionga.models import Project
from runs.lost_turns import do_end_lost_turns
from runs.models import Run
from tests.agent_key_helpers import deployed_agent
from tests.stack import free_port
from triggers.actions import do_create
from triggers.dispatch import RuntimeNotReached, do_hand_over
from triggers.firings import do_claim, do_fire
from triggers.models import Trigger


def test_a_turn_nobody_takes_is_retried_then_ended_lost(
        carol: User, acme: Project, settings: Any, tmp_path: Path) -> None:
    agent = deployed_agent(carol, acme)
    settings.KIONGA_LOCAL_AGENTS_DIR = str(tmp_path)
    (tmp_path / agent.name).mkdir()
    (tmp_path / agent.name / LOCAL_PORT).write_text(str(free_port()))  # nothing listens
    made = do_create(carol, agent, {"kind": "webhook", "name": "w"})
    trigger = Trigger.objects.select_related("agent__version").get(pk=made["id"])
    firing, _ = do_fire(trigger, "d1", "in")
    with pytest.raises(RuntimeNotReached):
        do_hand_over(str(firing.turn_id))
    assert Run.objects.get(pk=firing.turn_id).status == "queued"

    second, _ = do_fire(trigger, "d2", "in")
    do_claim(agent, second.turn_id, str(agent.version_id))
    assert do_hand_over(str(second.turn_id)) is False  # claimed: nothing to hand over

    Run.objects.filter(pk=firing.turn_id).update(
        started_at=timezone.now() - timedelta(hours=2))
    assert do_end_lost_turns() == 1
    lost = Run.objects.get(pk=firing.turn_id)
    assert lost.status == "failed" and lost.error is not None
    assert lost.error["code"] == "turn_lost"
