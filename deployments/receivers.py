"""Answers designs' `version_deployments`: where each version of a design is deployed."""

from __future__ import annotations

from typing import Any

from django.dispatch import receiver

from deployments.models import Agent, Rollout
from designs.models import Design
from designs.signals import version_deployments


@receiver(version_deployments)
def deployments_of_versions(sender: Any, design: Design,
                            **kwargs: Any) -> dict[str, list[dict[str, Any]]]:
    """{version_id: [{agent_id, agent_name, current, canary, deployed_at}]}: the agent
    running the version now (current), serving it as its canary (canary), or that ran it
    before (the latest rollout of it; a canary that ended is not a version it ran)."""
    agent = Agent.objects.filter(design=design).first()
    if agent is None:
        return {}
    found: dict[str, list[dict[str, Any]]] = {}
    for rollout in Rollout.objects.filter(agent=agent).order_by("-deployed_at", "-id"):
        key = str(rollout.version_id)
        canary = rollout.version_id == agent.canary_version_id
        if key not in found and (canary or rollout.action != Rollout.Action.CANARY):
            found[key] = [{"agent_id": str(agent.pk), "agent_name": agent.name,
                           "current": rollout.version_id == agent.version_id,
                           "canary": canary, "deployed_at": rollout.deployed_at.isoformat()}]
    return found
