"""The operator's ceilings on deploys (docs/configuration.md), checked before anything
is created or applied.

- One pod: its limits at most KIONGA_AGENT_MAX_CPU and KIONGA_AGENT_MAX_MEMORY, the
  maxima of the agents' namespace's LimitRange (docker/k8s/agents-quota.yaml). Above
  them Kubernetes would refuse the pods long after the deploy answered. 400
  invalid_request at the field's path.
- One project, its agents as this deploy would leave them (the agent being rolled
  forward counted once, with its new settings): at most KIONGA_PROJECT_MAX_AGENTS
  agents, KIONGA_PROJECT_MAX_AGENT_REPLICAS pods (the sum of max_replicas), and
  KIONGA_PROJECT_MAX_AGENT_CPU / _MEMORY (the sum of max_replicas x limits: what the
  agents may take when their autoscalers are at the top). 409 project_deploy_quota,
  details naming the ceiling. The caller holds the project's row lock, so two deploys
  cannot both take the last room.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from django.conf import settings

from deployments.models import Agent
from deployments.serializers import DEFAULT_AUTOSCALING, DEFAULT_RESOURCES
from kionga import quantities
from kionga.errors import APIError, invalid_field
from kionga.models import Project

# One pod's limits: the resource and the setting holding its ceiling.
POD_CEILINGS: Final = {"cpu": "KIONGA_AGENT_MAX_CPU", "memory": "KIONGA_AGENT_MAX_MEMORY"}


@dataclass(frozen=True)
class Footprint:
    """What agents may take at most: how many, their pods, and those pods' limits
    (CPU in cores, memory in bytes)."""

    agents: int = 0
    replicas: int = 0
    cpu: Decimal = Decimal(0)
    memory: Decimal = Decimal(0)

    def __add__(self, other: Footprint) -> Footprint:
        return Footprint(self.agents + other.agents, self.replicas + other.replicas,
                         self.cpu + other.cpu, self.memory + other.memory)


@dataclass(frozen=True)
class ProjectCeiling:
    field: str  # of Footprint, and details.ceiling
    setting: str
    what: str  # what the sum counts, in the message
    shown: Callable[[Decimal], int | str]  # a total as the answer spells it


PROJECT_CEILINGS: Final = (
    ProjectCeiling("agents", "KIONGA_PROJECT_MAX_AGENTS", "deployed agents", int),
    ProjectCeiling("replicas", "KIONGA_PROJECT_MAX_AGENT_REPLICAS",
                   "pods at most (the sum of max_replicas)", int),
    ProjectCeiling("cpu", "KIONGA_PROJECT_MAX_AGENT_CPU",
                   "CPUs at most (the sum of max_replicas x limits.cpu)", quantities.cores_text),
    ProjectCeiling("memory", "KIONGA_PROJECT_MAX_AGENT_MEMORY",
                   "of memory at most (the sum of max_replicas x limits.memory)",
                   quantities.bytes_text),
)


def footprint(autoscaling: Mapping[str, Any], resources: Mapping[str, Any]) -> Footprint:
    """One agent's, from its deploy settings."""
    replicas = int(autoscaling["max_replicas"])
    limits = resources["limits"]
    return Footprint(1, replicas, replicas * quantities.parse(limits["cpu"]),
                     replicas * quantities.parse(limits["memory"]))


def recorded_footprint(agent_settings: Any) -> Footprint:
    """An agent's, from the settings its last deploy recorded; the defaults' for anything
    unreadable (every deploy records settings its body was checked against)."""
    try:
        return footprint(agent_settings["autoscaling"], agent_settings["resources"])
    except (KeyError, TypeError, ValueError):
        return footprint(DEFAULT_AUTOSCALING, DEFAULT_RESOURCES)


def check_pod_limits(resources: Mapping[str, Mapping[str, str]]) -> None:
    """400 invalid_request at resources.limits.<kind> above this installation's pod ceiling."""
    for kind, setting in POD_CEILINGS.items():
        ceiling, limit = getattr(settings, setting), resources["limits"][kind]
        if quantities.parse(limit) > quantities.parse(ceiling):
            raise invalid_field(f"resources.limits.{kind}",
                                f"{limit} is more than one agent's pod may have here: at most "
                                f"{ceiling} ({setting}).")


def check_project_ceilings(project: Project, rolled: Agent | None, deployed: Footprint) -> None:
    """409 project_deploy_quota when the project's agents, with `deployed` in place of the
    agent being rolled forward (`rolled`, None for a new agent), pass a ceiling."""
    others = Agent.objects.filter(project=project)
    if rolled is not None:
        others = others.exclude(pk=rolled.pk)
    total = sum((recorded_footprint(s) for s in others.values_list("settings", flat=True)),
                deployed)
    for ceiling in PROJECT_CEILINGS:
        configured = getattr(settings, ceiling.setting)
        limit = Decimal(configured) if isinstance(configured, int) else quantities.parse(
            configured)
        needed: Decimal = Decimal(getattr(total, ceiling.field))
        if needed > limit:
            raise APIError(
                409, "project_deploy_quota",
                f"With this deploy, project {project.slug}'s agents would have "
                f"{ceiling.shown(needed)} {ceiling.what}; this installation allows "
                f"{configured} per project ({ceiling.setting}).",
                {"ceiling": ceiling.field, "setting": ceiling.setting,
                 "limit": ceiling.shown(limit), "requested": ceiling.shown(needed)})
