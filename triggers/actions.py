"""Editing an agent's triggers (editors; viewers read). Each change is audited on the
agent: agent.trigger_created, agent.trigger_updated, agent.trigger_deleted — never
with the secret, which is in the creation's answer only."""

from __future__ import annotations

from typing import Any, Final

from django.contrib.auth.models import User
from django.db import transaction

from deployments.models import Agent
from kionga import audit
from kionga.errors import invalid_field, not_found
from triggers.models import Firing, Trigger
from triggers.schedules import check_cron, check_timezone, sync_periodic_task
from triggers.webhooks import new_secret

TRIGGERS_LIMIT: Final = 100
RECENT_FIRINGS: Final = 20
# What a schedule has and a webhook has not.
SCHEDULE_FIELDS: Final = ("cron", "timezone", "input")
DEFAULT_TIMEZONE: Final = "UTC"


def triggers_of(agent: Agent) -> list[dict[str, Any]]:
    return [t.to_dict() for t in Trigger.objects.filter(agent=agent)
            .select_related("created_by")[:TRIGGERS_LIMIT]]


def check_trigger(agent: Agent, trigger_id: Any) -> Trigger:
    """One of the agent's triggers, or 404."""
    found = (Trigger.objects.filter(agent=agent, pk=trigger_id)
             .select_related("agent", "created_by", "periodic_task").first())
    if found is None:
        raise not_found("This agent has no such trigger.")
    return found


def trigger_dict(trigger: Trigger) -> dict[str, Any]:
    """The trigger with its latest firings: which turn each delivery or due time started."""
    firings = (Firing.objects.filter(trigger=trigger).select_related("turn")
               [:RECENT_FIRINGS])
    return {**trigger.to_dict(), "firings": [
        {**f.to_dict(), "status": f.turn.status, "created_at": f.created_at.isoformat()}
        for f in firings]}


def _check_kind_fields(kind: str, fields: dict[str, Any]) -> None:
    if kind == Trigger.Kind.WEBHOOK:
        for name in SCHEDULE_FIELDS:
            if name in fields:
                raise invalid_field(name, "Only schedules have this; a webhook's turn "
                                          "gets the delivery's body.")
        return
    if "cron" in fields:
        check_cron(fields["cron"])
    if "timezone" in fields:
        check_timezone(fields["timezone"])


def do_create(user: User, agent: Agent, fields: dict[str, Any]) -> dict[str, Any]:
    """The new trigger; a webhook's answer holds its `secret`, shown this once."""
    kind = fields.pop("kind")
    _check_kind_fields(kind, fields)
    if kind == Trigger.Kind.SCHEDULE:
        if "cron" not in fields:
            raise invalid_field("cron", "A schedule needs a cron expression.")
        fields.setdefault("timezone", DEFAULT_TIMEZONE)
    with transaction.atomic():
        trigger = Trigger(project_id=agent.project_id, agent=agent, kind=kind,
                          created_by=user, **fields)
        secret = new_secret() if kind == Trigger.Kind.WEBHOOK else ""
        trigger.secret = secret
        trigger.save(force_insert=True)
        if kind == Trigger.Kind.SCHEDULE:
            sync_periodic_task(trigger)
        audit.record("agent.trigger_created", project=agent.project, actor=user,
                     target_type="agent", target_id=agent.pk,
                     details={"trigger_id": str(trigger.pk), **_described(trigger)})
    answer = trigger.to_dict()
    if secret:
        answer["secret"] = secret
    return answer


def do_update(user: User, trigger: Trigger, changes: dict[str, Any]) -> Trigger:
    """Changed fields saved (beat's row with them), audited with before and after."""
    _check_kind_fields(trigger.kind, changes)
    changed = {name: value for name, value in changes.items()
               if getattr(trigger, name) != value}
    if not changed:
        return trigger
    before = {name: getattr(trigger, name) for name in changed}
    with transaction.atomic():
        for name, value in changed.items():
            setattr(trigger, name, value)
        trigger.save(update_fields=[*changed, "updated_at"])
        if trigger.kind == Trigger.Kind.SCHEDULE:
            sync_periodic_task(trigger)
        audit.record("agent.trigger_updated", project=trigger.agent.project, actor=user,
                     target_type="agent", target_id=trigger.agent_id,
                     details={"trigger_id": str(trigger.pk), "kind": trigger.kind,
                              "name": trigger.name, "before": before, "after": changed})
    return trigger


def do_delete(user: User, trigger: Trigger) -> None:
    """Gone with beat's row; its turns stay (they are the agent's runs)."""
    with transaction.atomic():
        audit.record("agent.trigger_deleted", project=trigger.agent.project, actor=user,
                     target_type="agent", target_id=trigger.agent_id,
                     details={"trigger_id": str(trigger.pk), **_described(trigger)})
        trigger.delete()


def _described(trigger: Trigger) -> dict[str, Any]:
    found: dict[str, Any] = {"kind": trigger.kind, "name": trigger.name,
                             "enabled": trigger.enabled}
    if trigger.kind == Trigger.Kind.SCHEDULE:
        found.update(cron=trigger.cron, timezone=trigger.timezone)
    return found
