"""A bearer API token checked inside a hot route's one query (the rules of
kionga.tokens.find_token, as SQL): the caller joins `TOKEN_SQL` and `TOKEN_WHERE`."""

from __future__ import annotations

import hmac
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Final

from django.contrib.auth.models import User

from kionga.errors import APIError
from kionga.models import ApiToken
from kionga.tokens import PREFIX_LENGTH, TOKEN_PREFIX, hash_token, touch

# Live tokens with this prefix whose user is active (t: the token, u: its user).
TOKEN_SQL: Final = (f"{ApiToken._meta.db_table} t JOIN {User._meta.db_table} u "
                    "ON u.id = t.user_id AND u.is_active")
TOKEN_WHERE: Final = ("t.prefix = %(prefix)s AND NOT t.revoked "
                      "AND (t.expires_at IS NULL OR t.expires_at > now())")


def prefix_of(raw: str) -> str:
    """The indexed prefix to look the token up by, or 401."""
    if not raw.startswith(TOKEN_PREFIX):
        raise invalid_token()
    return raw[:PREFIX_LENGTH]


def pick(rows: Sequence[Sequence[Any]], raw: str, hash_column: int) -> Sequence[Any]:
    """The row whose token hash is raw's, or 401. Every candidate is compared in
    constant time: timing tells nothing of the hashes."""
    wanted = hash_token(raw)
    found = [row for row in rows if hmac.compare_digest(str(row[hash_column]), wanted)]
    if not found:
        raise invalid_token()
    return found[0]


def touch_token(token_id: int, last_used: datetime | None) -> None:
    """Record the token's use as kionga.tokens.touch does (at most once a minute)."""
    touch(ApiToken(pk=token_id, last_used_at=last_used))


def invalid_token() -> APIError:
    return APIError(401, "invalid_token", "The token is unknown or revoked.")
