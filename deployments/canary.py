"""A canary's start: the rules a deploy with `canary_percent` adds (deployments/deploy.py).

Deploying version B with `canary_percent` to an agent running version A keeps A as the
agent's version and makes B its canary: the runtime holds both verified artifacts and
serves that share of the turns with B, sticky per session (agents/canary.py;
docs/decisions/canary-routing-in-the-runtime.md). A canary deploy while a canary runs
replaces it (another version or percentage); a deploy without `canary_percent` ends it.
Promotion is deployments/promote.py; a rollback during a canary ends it and keeps A
(deployments/rollback.py).
"""

from __future__ import annotations

from typing import Any

from contracts.agent_runtime import CANARY_MAX_PERCENT, CANARY_MIN_PERCENT
from deployments.models import Agent
from designs.models import Version
from kionga.errors import APIError


def check_percent(percent: int) -> None:
    """422 invalid_canary_percent outside 1-99 (0 % is no canary, 100 % is a deploy)."""
    if not CANARY_MIN_PERCENT <= percent <= CANARY_MAX_PERCENT:
        raise APIError(422, "invalid_canary_percent",
                       f"canary_percent must be {CANARY_MIN_PERCENT} to {CANARY_MAX_PERCENT} "
                       f"(got {percent}): deploy without it to send every turn to the version.",
                       {"canary_percent": percent, "min": CANARY_MIN_PERCENT,
                        "max": CANARY_MAX_PERCENT})


def check_canary_target(agent: Agent | None, version: Version) -> Agent:
    """The agent a canary of `version` joins (call under the project's lock): 409 when
    the design has no agent yet, or when the version is the one the agent runs."""
    if agent is None:
        raise APIError(409, "no_agent", "A canary needs a deployed agent to share turns "
                       "with: deploy a version of this design first (without canary_percent).",
                       {"design_id": str(version.design_id)})
    if agent.version_id == version.pk:
        raise APIError(409, "canary_same_version",
                       f"Agent {agent.name} runs version {version.number} already; a canary "
                       "is another version.",
                       {"agent_id": str(agent.pk), "version": version.number})
    return agent


def canary_document(version: Version, percent: int) -> dict[str, Any]:
    """What the runtime reads as its canary (objects.CANARY_FILE)."""
    return {"percent": percent, "artifact": version.artifact}
