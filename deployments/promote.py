"""POST agents/{id}/promote: the agent's canary becomes its version and the canary ends.

The canary's stored artifact is verified against the content_sha256 recorded at publish
(409 `hash_mismatch`, as a rollback), then it is a rollout (deploy.roll_out: every check
of a deploy, the agent's settings kept) of action `promote`, audited as
`agent.canary_promoted`. No canary: 409 `no_canary`.
"""

from __future__ import annotations

from django.contrib.auth.models import User

from deployments.deploy import roll_out
from deployments.models import Agent, Rollout
from deployments.rollback import check_version_hash
from kionga.errors import APIError


def do_promote(user: User, agent: Agent) -> Agent:
    canary = agent.canary_version
    if canary is None:
        raise APIError(409, "no_canary", f"Agent {agent.name} runs no canary to promote.",
                       {"agent_id": str(agent.pk)})
    check_version_hash(canary)
    promoted, _ = roll_out(user, canary, agent.settings, Rollout.Action.PROMOTE)
    return promoted
