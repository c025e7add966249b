"""Bearer secrets: API tokens here, run credentials (runs.credentials) with the same helpers.

A secret is a prefix (``kio_`` for API tokens) + 43 url-safe characters (256 random
bits). Only a SHA-256 of it is stored: a slow password hash is unnecessary because
the value is random, not chosen by a person.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets

from django.contrib.auth.models import User
from django.utils import timezone

from kionga.models import ApiToken

TOKEN_PREFIX = "kio_"
PREFIX_LENGTH = 8
# Only refresh last_used_at this often: one write per request would be wasteful.
LAST_USED_RESOLUTION_SECONDS = 60


def new_token(prefix: str) -> str:
    """A fresh secret: prefix + 256 random bits, url-safe."""
    return prefix + secrets.token_urlsafe(32)


def hash_token(raw: str) -> str:
    """What is stored of a secret, and looked up by."""
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def issue_token(user: User, name: str) -> str:
    """Create a token for user and return the raw value; it is never retrievable again."""
    raw = new_token(TOKEN_PREFIX)
    ApiToken.objects.create(
        user=user, name=name, prefix=raw[:PREFIX_LENGTH], token_hash=hash_token(raw)
    )
    return raw


def find_token(raw: str) -> ApiToken | None:
    """The live (not revoked, active user) token matching raw, or None."""
    if not raw.startswith(TOKEN_PREFIX):
        return None
    wanted = hash_token(raw)
    candidates = ApiToken.objects.select_related("user").filter(
        prefix=raw[:PREFIX_LENGTH], revoked=False, user__is_active=True
    )
    for token in candidates:
        # Constant time, so response timing does not leak how much of a hash matched.
        if hmac.compare_digest(token.token_hash, wanted):
            return token
    return None


def touch(token: ApiToken) -> None:
    now = timezone.now()
    last = token.last_used_at
    if last is None or (now - last).total_seconds() > LAST_USED_RESOLUTION_SECONDS:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now


def find_user_by_token(raw: str) -> User | None:
    token = find_token(raw)
    if token is None:
        return None
    touch(token)
    return token.user
