"""`kionga agents`, `kionga members` and `kionga approvals`: deployed agents (roll back,
canary, triggers), project members and approval requests. Registered on the `kionga`
group by kionga_client.cli."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

import click

from kionga_client import canary
from kionga_client import operations as ops
from kionga_client.command_kit import common
from kionga_client.errors import KiongaError
from kionga_client.gateway import Gateway
from kionga_client.human import Out


@click.group()
def agents() -> None:
    """Deployed agents: list, roll back, canary, triggers."""


@agents.command("list")
@click.option("--project", type=int, help="Only this project's agents.")
@common("agents list")
def agents_list(gw: Gateway, out: Out, project: int | None) -> ops.Result:
    """Deployed agents of your projects."""
    return ops.agents_list(gw, project_id=project)


@agents.command("rollback")
@click.argument("agent_id")
@common("agents rollback")
def agents_rollback(gw: Gateway, out: Out, agent_id: str) -> ops.Result:
    """Roll an agent back to the version it ran before (editors; hash-verified)."""
    return ops.agent_rollback(gw, agent_id)


@agents.group("canary")
def agents_canary() -> None:
    """A canary: a new version serving a share of an agent's turns, then promoted or
    rolled back."""


@agents_canary.command("start")
@click.argument("agent_id")
@click.option("--version", "version", required=True,
              help="The canary version: its number (of the agent's design) or its ID.")
@click.option("--percent", type=int, required=True,
              help="The share of turns it serves, 1 to 99 (sticky per session).")
@common("agents canary start")
def agents_canary_start(gw: Gateway, out: Out, agent_id: str, version: str,
                        percent: int) -> ops.Result:
    """Start (or change) a canary of an agent (editors)."""
    return canary.canary_start(gw, agent_id, version, percent)


@agents_canary.command("promote")
@click.argument("agent_id")
@common("agents canary promote")
def agents_canary_promote(gw: Gateway, out: Out, agent_id: str) -> ops.Result:
    """Make the canary the agent's version; the canary ends (editors; hash-verified)."""
    return canary.canary_promote(gw, agent_id)


@agents_canary.command("rollback")
@click.argument("agent_id")
@common("agents canary rollback")
def agents_canary_rollback(gw: Gateway, out: Out, agent_id: str) -> ops.Result:
    """End the canary; the agent keeps its version (editors)."""
    return canary.canary_rollback(gw, agent_id)


@agents_canary.command("status")
@click.argument("agent_id")
@click.option("--hours", type=click.IntRange(1, 168), default=24, show_default=True)
@common("agents canary status")
def agents_canary_status(gw: Gateway, out: Out, agent_id: str, hours: int) -> ops.Result:
    """The canary and both versions' turns, errors, latency, tokens and cost."""
    return canary.canary_status(gw, agent_id, hours)
@agents.group("triggers")
def agent_triggers() -> None:
    """An agent's webhooks and schedules: list, show, create, update, enable, disable,
    delete (editors change them)."""


@agent_triggers.command("list")
@click.argument("agent_id")
@common("agents triggers list")
def triggers_list(gw: Gateway, out: Out, agent_id: str) -> ops.Result:
    """The agent's triggers."""
    return ops.triggers_list(gw, agent_id)


@agent_triggers.command("show")
@click.argument("agent_id")
@click.argument("trigger_id")
@common("agents triggers show")
def triggers_show(gw: Gateway, out: Out, agent_id: str, trigger_id: str) -> ops.Result:
    """One trigger with the turns it started lately."""
    return ops.trigger_show(gw, agent_id, trigger_id)


@agent_triggers.command("create-webhook")
@click.argument("agent_id")
@click.option("--name", required=True)
@common("agents triggers create-webhook")
def triggers_create_webhook(gw: Gateway, out: Out, agent_id: str, name: str) -> ops.Result:
    """A signed webhook; its secret is printed this once (keep it where the sender reads
    it)."""
    return ops.trigger_create(gw, agent_id, {"kind": "webhook", "name": name})


@agent_triggers.command("create-schedule")
@click.argument("agent_id")
@click.option("--name", required=True)
@click.option("--cron", required=True, help="minute hour day-of-month month day-of-week, "
              "e.g. '0 9 * * mon-fri'.")
@click.option("--timezone", default="UTC", show_default=True, help="An IANA time zone.")
@click.option("--input", "text", default="", help="The input of each turn.")
@common("agents triggers create-schedule")
def triggers_create_schedule(gw: Gateway, out: Out, agent_id: str, name: str, cron: str,
                             timezone: str, text: str) -> ops.Result:
    """A schedule: a turn at each time the cron expression matches in the time zone."""
    return ops.trigger_create(gw, agent_id, {"kind": "schedule", "name": name, "cron": cron,
                                             "timezone": timezone, "input": text})


@agent_triggers.command("update")
@click.argument("agent_id")
@click.argument("trigger_id")
@click.option("--name")
@click.option("--cron")
@click.option("--timezone")
@click.option("--input", "text")
@common("agents triggers update")
def triggers_update(gw: Gateway, out: Out, agent_id: str, trigger_id: str,
                    name: str | None, cron: str | None, timezone: str | None,
                    text: str | None) -> ops.Result:
    """Change a trigger's name, or a schedule's cron, time zone or input."""
    changes = {key: value for key, value in (("name", name), ("cron", cron),
                                             ("timezone", timezone), ("input", text))
               if value is not None}
    if not changes:
        raise KiongaError("USAGE", "Nothing to change: give --name, --cron, --timezone or "
                                   "--input.")
    return ops.trigger_update(gw, agent_id, trigger_id, changes)


def _switch(enabled: bool) -> Callable[..., NoReturn]:
    verb = "enable" if enabled else "disable"

    @click.argument("agent_id")
    @click.argument("trigger_id")
    @common(f"agents triggers {verb}")
    def switch(gw: Gateway, out: Out, agent_id: str, trigger_id: str) -> ops.Result:
        return ops.trigger_update(gw, agent_id, trigger_id, {"enabled": enabled})

    switch.__doc__ = ("Start turns again from this trigger." if enabled else
                      "Stop this trigger starting turns (deliveries answer 409).")
    return switch


agent_triggers.command("enable")(_switch(True))
agent_triggers.command("disable")(_switch(False))


@agent_triggers.command("delete")
@click.argument("agent_id")
@click.argument("trigger_id")
@common("agents triggers delete")
def triggers_delete(gw: Gateway, out: Out, agent_id: str, trigger_id: str) -> ops.Result:
    """Delete a trigger (the turns it started stay)."""
    return ops.trigger_delete(gw, agent_id, trigger_id)


@click.group()
def members() -> None:
    """Project members: invite people (project admins)."""


@members.command("invite")
@click.argument("user")
@click.option("--project", type=int, required=True, help="The project's ID.")
@click.option("--role", default="viewer", show_default=True,
              type=click.Choice(["viewer", "editor", "admin"]))
@common("members invite")
def members_invite(gw: Gateway, out: Out, user: str, project: int, role: str) -> ops.Result:
    """Invite USER (a user name or an email address) to a project; they accept where
    they sign in, or through the set-password link emailed to an address with no account."""
    return ops.member_invite(gw, project, user, role)


@click.group()
def approvals() -> None:
    """Approval requests (agents may read, never decide)."""


@approvals.command("list")
@click.option("--status", default="pending", show_default=True,
              type=click.Choice(["pending", "approved", "rejected", "expired", "cancelled"]))
@click.option("--project", type=int)
@click.option("--run", "run_id")
@click.option("--limit", type=int)
@common("approvals list")
def approvals_list(gw: Gateway, out: Out, status: str, project: int | None,
                   run_id: str | None, limit: int | None) -> ops.Result:
    """Approval requests of your projects."""
    return ops.approvals_list(gw, status=status, project_id=project, run_id=run_id,
                              limit=limit)
