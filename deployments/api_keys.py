"""Agent API keys: how callers of a deployed agent authenticate (docs/decisions/agent-api-keys.md).

A key is `kak_` + 256 random bits, made by an editor of the agent's project, shown once
and stored as its SHA-256 (kionga.tokens). It is good for one agent only, until it is
revoked (at once: the runtime has every request's key verified here, nothing is cached)
or expires, and at most `rate_per_minute` requests in any sliding minute (counted in
Redis, kionga.throttles). Creating and revoking are audited.
"""

from __future__ import annotations

import math
import secrets
import time
from datetime import datetime, timedelta
from typing import Any, Final

from django.contrib.auth.models import User
from django.db.models import Q
from django.utils import timezone

from contracts.agent_runtime import API_KEY_PREFIX, INVALID_API_KEY
from deployments.models import Agent, AgentApiKey
from kionga import audit
from kionga.errors import APIError, invalid_field, not_found
from kionga.throttles import KEY_PREFIX, Window, admit
from kionga.tokens import hash_token, new_token

DEFAULT_DAYS: Final = 90
DEFAULT_RATE: Final = 60
MAX_RATE: Final = 100_000
PREFIX_LENGTH: Final = 8
KEYS_LIMIT: Final = 500
# last_used_at is written at most this often per key (one write per call is waste).
LAST_USED_RESOLUTION_SECONDS: Final = 60
RATE_WINDOW_MS: Final = 60_000


def keys_of(agent: Agent) -> list[dict[str, Any]]:
    return [key.to_dict() for key in AgentApiKey.objects.filter(agent=agent)
            .select_related("created_by")[:KEYS_LIMIT]]


def do_create_key(user: User, agent: Agent, name: str, rate_per_minute: int,
                  expires_at: datetime | None) -> dict[str, Any]:
    """The new key's row as a dict, with `key`: the raw value, shown this once."""
    now = timezone.now()
    if expires_at is None:
        expires_at = now + timedelta(days=DEFAULT_DAYS)
    elif expires_at <= now:
        raise invalid_field("expires_at", "Must be in the future.")
    raw = new_token(API_KEY_PREFIX)
    key = AgentApiKey.objects.create(
        agent=agent, name=name, prefix=raw[:PREFIX_LENGTH], token_hash=hash_token(raw),
        rate_per_minute=rate_per_minute, expires_at=expires_at, created_by=user)
    audit.record("agent.api_key_created", project=agent.project, actor=user,
                 target_type="agent", target_id=agent.pk,
                 details={"key_id": str(key.pk), "name": name, "prefix": key.prefix,
                          "rate_per_minute": rate_per_minute,
                          "expires_at": expires_at.isoformat()})
    return {**key.to_dict(), "key": raw}


def check_key(agent: Agent, key_id: Any) -> AgentApiKey:
    """One of the agent's keys, or 404."""
    key = AgentApiKey.objects.filter(agent=agent, pk=key_id).select_related("created_by").first()
    if key is None:
        raise not_found("This agent has no such API key.")
    return key


def do_revoke_key(user: User, agent: Agent, key: AgentApiKey) -> AgentApiKey:
    """Revoked from now on (the next request with it is 401); revoking again changes
    nothing and records nothing."""
    if AgentApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(
            revoked_at=timezone.now()):
        audit.record("agent.api_key_revoked", project=agent.project, actor=user,
                     target_type="agent", target_id=agent.pk,
                     details={"key_id": str(key.pk), "name": key.name, "prefix": key.prefix})
        key.refresh_from_db(fields=["revoked_at"])
    return key


def invalid_key(message: str) -> APIError:
    error = APIError(401, INVALID_API_KEY, message)
    error.auth_header = 'Bearer realm="agent"'  # type: ignore[attr-defined]
    return error


def check_caller_key(agent: Agent, raw: str, *, count: bool = True) -> AgentApiKey:
    """The live key `raw` of this agent, its request counted in the key's rate (unless
    `count` is false: the runtime counted this request already); 401 invalid_api_key or
    429 throttled with Retry-After."""
    if not raw.startswith(API_KEY_PREFIX):
        raise invalid_key("Send 'Authorization: Bearer <agent API key>'.")
    now = timezone.now()
    key = (AgentApiKey.objects.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now),
                                      token_hash=hash_token(raw), agent=agent,
                                      revoked_at__isnull=True).first())
    if key is None:
        raise invalid_key("The API key is unknown, of another agent, revoked or expired.")
    if count:
        millis = int(time.time() * 1000)
        wait = admit(Window(f"{KEY_PREFIX}agent-key:{key.pk}", millis, RATE_WINDOW_MS,
                            key.rate_per_minute, f"{millis}-{secrets.token_hex(4)}"))
        if wait is not None:
            raise APIError(429, "throttled", f"This API key's rate ({key.rate_per_minute} "
                           "requests a minute) is used up.", retry_after=max(1, math.ceil(wait)))
    last = key.last_used_at
    if last is None or (now - last).total_seconds() > LAST_USED_RESOLUTION_SECONDS:
        AgentApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
    return key
