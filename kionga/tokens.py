"""Bearer secrets: API tokens here, run credentials (runs.credentials) with the same helpers.

A secret is a prefix (``kio_`` for API tokens) + 43 url-safe characters (256 random
bits). Only a SHA-256 of it is stored: a slow password hash is unnecessary because
the value is random, not chosen by a person.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from datetime import datetime
from typing import Final

from django.contrib.auth.models import User
from django.utils import timezone

from kionga import prepared_sql
from kionga.models import ApiToken, TokenRevocation
from kionga.token_scope import block_projects, mark_token

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


def issue_token(user: User, name: str, expires_at: datetime | None = None) -> str:
    """Create a token for user and return the raw value; it is never retrievable again."""
    return create_token(user, name, expires_at)[1]


def create_token(user: User, name: str, expires_at: datetime | None = None,
                 parent: ApiToken | None = None) -> tuple[ApiToken, str]:
    """The new token's row and its raw value (shown once, never stored). A token made
    by a token's request goes through kionga.token_lineage.make_child, which sets parent."""
    raw = new_token(TOKEN_PREFIX)
    token = ApiToken.objects.create(user=user, name=name, prefix=raw[:PREFIX_LENGTH],
                                    token_hash=hash_token(raw), expires_at=expires_at,
                                    parent=parent)
    return token, raw


def find_token(raw: str) -> ApiToken | None:
    """The live (not revoked, not expired, active user) token matching raw, with its
    user and the projects it was revoked for (signed_in_user reads them), or None."""
    if not raw.startswith(TOKEN_PREFIX):
        return None
    wanted = hash_token(raw)
    # One prepared statement, no ORM compile per request.
    rows = prepared_sql.fetch_all(_FIND, {"prefix": raw[:PREFIX_LENGTH], "now": timezone.now()})
    candidates = [_token_of(row) for row in rows]
    found = None
    for token in candidates:
        # Constant time, so response timing does not leak how much of a hash matched.
        if hmac.compare_digest(token.token_hash, wanted):
            found = token
    return found


_TOKEN_FIELDS: Final = [f for f in ApiToken._meta.concrete_fields]
_USER_FIELDS: Final = [f for f in User._meta.concrete_fields]
_FIND: Final = (
    "SELECT " + ", ".join([*(f"t.{f.column}" for f in _TOKEN_FIELDS),
                           *(f"u.{f.column}" for f in _USER_FIELDS)])
    + f", ARRAY(SELECT r.project_id FROM {TokenRevocation._meta.db_table} r"
      " WHERE r.token_id = t.id)"
    + f" FROM {ApiToken._meta.db_table} t JOIN {User._meta.db_table} u"
      " ON u.id = t.user_id AND u.is_active"
      " WHERE t.prefix = %(prefix)s AND NOT t.revoked"
      " AND (t.expires_at IS NULL OR t.expires_at > %(now)s)")


def _token_of(row: tuple[object, ...]) -> ApiToken:
    """A row of _FIND as the ORM would load it: the token, its user, its revocations."""
    split = len(_TOKEN_FIELDS)
    token = ApiToken.from_db("default", [f.attname for f in _TOKEN_FIELDS], row[:split])
    token.user = User.from_db("default", [f.attname for f in _USER_FIELDS],
                              row[split:split + len(_USER_FIELDS)])
    token.revoked_in = list(row[-1])  # type: ignore[attr-defined, call-overload]
    return token


def touch(token: ApiToken) -> None:
    now = timezone.now()
    last = token.last_used_at
    if last is None or (now - last).total_seconds() > LAST_USED_RESOLUTION_SECONDS:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now


def signed_in_user(token: ApiToken) -> User:
    """The person a live token authenticates, for one request: last use recorded, the
    projects whose admins revoked this token hidden from kionga.access, and the token
    named for kionga.access to record which projects it reaches (kionga.token_use)."""
    touch(token)
    revoked_in = getattr(token, "revoked_in", None)  # read with the token (find_token)
    block_projects(token.user, revoked_in if revoked_in is not None else
                   TokenRevocation.objects.filter(token=token).values_list("project_id",
                                                                           flat=True))
    mark_token(token.user, token.pk)
    return token.user


def find_user_by_token(raw: str) -> User | None:
    token = find_token(raw)
    return None if token is None else signed_in_user(token)
