"""Turns a trigger starts: opened here, run by the agent's runtime.

A firing is one Run row with `agent` set, `queued`, and one Firing row naming the
trigger and the delivery (unique per trigger: a repeat finds the first and starts
nothing). After the commit, a task (triggers.tasks.start_turn) asks the agent's runtime
to run it: the runtime claims the turn on the internal listener with its credential
(do_claim: once; the turn becomes `running` with the version the runtime serves), runs
it with the engine and reports it like a caller's turn. A turn nobody claims (runtime
down) is ended `turn_lost` by the lost-turns sweep (runs/lost_turns.py), counted from
its opening.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from deployments.models import Agent
from kionga.errors import APIError
from runs.agent_turns import check_rolled_out, version_fields
from runs.models import Run
from triggers.models import Firing, Trigger


def do_fire(trigger: Trigger, delivery_id: str, text: str) -> tuple[Firing, bool]:
    """The firing of this delivery and whether it is new; a new one's turn is queued and
    handed to the runtime once committed."""
    from triggers.tasks import start_turn_task  # tasks import this module (schedules)

    agent = trigger.agent
    try:
        with transaction.atomic():
            turn = Run.objects.create(
                project_id=agent.project_id, design_id=agent.design_id,
                status=Run.Status.QUEUED, input=text, allow_side_effects=True, agent=agent,
                started_at=timezone.now(), **version_fields(agent.version))
            firing = Firing.objects.create(trigger=trigger, turn=turn, delivery_id=delivery_id)
    except IntegrityError:  # the same delivery, committed by another request meanwhile
        return Firing.objects.get(trigger=trigger, delivery_id=delivery_id), False
    turn_id = str(turn.pk)
    transaction.on_commit(lambda: start_turn_task.delay(turn_id))
    return firing, True


def do_claim(agent: Agent, turn_id: Any, version_id: str) -> Run:
    """The queued turn, now running with the version the claiming runtime serves; 404
    when the agent has no such triggered turn, 409 turn_claimed when it was claimed."""
    version = check_rolled_out(agent, version_id)
    with transaction.atomic():
        turn = (Run.objects.select_for_update()
                .filter(pk=turn_id, agent=agent, firing__isnull=False).first())
        if turn is None:
            raise APIError(404, "not_found", "This agent has no such triggered turn.")
        if turn.status != Run.Status.QUEUED:
            raise APIError(409, "turn_claimed", "This turn was claimed already.")
        for name, value in version_fields(version).items():
            setattr(turn, name, value)
        turn.status, turn.started_at = Run.Status.RUNNING, timezone.now()
        turn.save(update_fields=["version_id", "content_sha256", "resources", "status",
                                 "started_at"])
    return turn


def queued_turn(turn_id: str) -> Run | None:
    """The triggered turn still waiting for its runtime, with its agent."""
    return (Run.objects.select_related("agent")
            .filter(pk=turn_id, status=Run.Status.QUEUED, firing__isnull=False).first())
