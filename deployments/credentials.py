"""Agent credentials: `kag_` + 256 random bits, the deployed agent's project identity.

Issued at the agent's first deploy and handed to its pods in a Secret; only the hash
is stored. Good on the internal listener only (runs.agent_auth), for the resources of
the agent's current version, while not revoked (admin action, or `revoke_credentials`).
"""

from __future__ import annotations

from django.utils import timezone

from deployments.models import Agent, AgentCredential
from kionga.tokens import hash_token, new_token

AGENT_CREDENTIAL_PREFIX = "kag_"


def issue_credential(agent: Agent) -> str:
    raw = new_token(AGENT_CREDENTIAL_PREFIX)
    AgentCredential.objects.create(agent=agent, token_hash=hash_token(raw))
    return raw


def revoke_credentials(agent: Agent) -> int:
    return AgentCredential.objects.filter(agent=agent, revoked_at__isnull=True).update(
        revoked_at=timezone.now())


def find_agent(raw: str) -> Agent | None:
    """The agent whose live credential `raw` is, or None (unknown, revoked)."""
    if not raw.startswith(AGENT_CREDENTIAL_PREFIX):
        return None
    found = (AgentCredential.objects.select_related("agent__version", "agent__project")
             .filter(token_hash=hash_token(raw), revoked_at__isnull=True).first())
    return found.agent if found is not None else None
