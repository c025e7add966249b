"""Reading agents: access (another project's agent is 404; viewers read), lists."""

from __future__ import annotations

import uuid
from typing import Any

from deployments.models import Agent, Rollout
from kionga.access import (
    AnyUser,
    check_project_access,
    check_row_access,
    projects_of,
)
from kionga.models import Role

ROLLOUT_LIMIT = 100


def check_agent_access(user: AnyUser, agent_id: uuid.UUID | str,
                       min_role: str = Role.VIEWER) -> Agent:
    return check_row_access(Agent.objects.select_related("version", "project",
                                                         "canary_version"), agent_id,
                            user, min_role, "Agent not found.")


def rollouts_of(agent: Agent) -> list[dict[str, Any]]:
    """The rollout timeline, newest first."""
    return [r.to_dict() for r in Rollout.objects.filter(agent=agent)
            .select_related("version", "deployed_by")[:ROLLOUT_LIMIT]]


def agent_dict(agent: Agent) -> dict[str, Any]:
    return {**agent.summary(), "rollouts": rollouts_of(agent)}


def agents_of(user: AnyUser, project_id: Any = None) -> list[Agent]:
    found = Agent.objects.filter(project__in=projects_of(user))
    if project_id is not None:
        found = found.filter(project=check_project_access(user, project_id))
    return list(found.select_related("version", "canary_version")
                .order_by("-updated_at")[:500])
