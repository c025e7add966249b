"""Helpers of the agent API key tests: a deployed agent (no cluster needed) and its keys."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import User

from deployments.api_keys import do_create_key
from deployments.models import Agent
from kionga.models import Project
from tests.operations_helpers import agent_of
from tests.versions_helpers import linear, published


def deployed_agent(user: User, project: Project, name: str = "agent-keys") -> Agent:
    version = published(user, project, linear(
        {"id": "fill", "kind": "prompt", "config": {"template": "<{input}>"}}), name=name)
    return agent_of(version, name)


def keys_url(agent: Agent, key_id: Any = None) -> str:
    url = f"/api/v1/agents/{agent.pk}/api-keys"
    return url if key_id is None else f"{url}/{key_id}"


def new_key(user: User, agent: Agent, rate: int = 60,
            expires_at: datetime | None = None) -> tuple[str, str]:
    """(key id, raw key)."""
    made = do_create_key(user, agent, "test", rate, expires_at)
    return made["id"], made["key"]
