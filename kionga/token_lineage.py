"""Tokens made from tokens (docs/decisions/tokens-made-by-tokens.md).

A token's request makes children only: a child records its parent and expires no
later than it. Whatever ends or narrows a token — its revocation, a project admin's
revocation for one project, a shorter expiry — is written at that moment on every
token made from it, at any depth; a child made later copies its parent's project
revocations. So each token's own row says everything: kionga.tokens.find_token reads
no ancestry.

Every write over a person's tokens holds a lock on that person's row, so a child
being made and a revocation of its parent are never interleaved: the child either
exists when the revocation lists the lineage, or is made after and copies it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Final

from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from kionga.auth import invalid_token
from kionga.errors import forbidden
from kionga.models import ApiToken, Project, TokenRevocation
from kionga.tokens import create_token

_TOKENS: Final = ApiToken._meta.db_table
# The token and every token made from it (a recursive query).
_LINEAGE: Final = f"""
WITH RECURSIVE lineage(id) AS (
    SELECT id FROM {_TOKENS} WHERE id = %s
    UNION
    SELECT c.id FROM {_TOKENS} c JOIN lineage l ON c.parent_id = l.id
)
SELECT id FROM lineage
"""
# The token and every token it was made from.
_ANCESTRY: Final = f"""
WITH RECURSIVE ancestry(id, parent_id) AS (
    SELECT id, parent_id FROM {_TOKENS} WHERE id = %s
    UNION
    SELECT p.id, p.parent_id FROM {_TOKENS} p JOIN ancestry a ON p.id = a.parent_id
)
SELECT id FROM ancestry
"""

OUTLIVES_PARENT: Final = ("A token may not make a token that outlives it (it expires at {}); "
                          "sign in to choose a later expiry.")
NOT_NARROWER: Final = ("A token may shorten an expiry but never clear or extend one; sign in "
                       "to do that.")


def lineage(token_id: int) -> list[int]:
    """The token's ID and those of every token made from it, at any depth."""
    return _ids(_LINEAGE, token_id)


def ancestry(token_id: int) -> list[int]:
    """The token's ID and those of every token it was made from."""
    return _ids(_ANCESTRY, token_id)


def _ids(sql: str, token_id: int) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(sql, [token_id])
        return [int(row[0]) for row in cursor.fetchall()]


@contextmanager
def owner_locked(user_id: int) -> Iterator[None]:
    """A transaction in which no other request writes this person's tokens' lineage.
    FOR NO KEY UPDATE: rows that merely reference the person (audit, runs) still insert."""
    with transaction.atomic():
        list(User.objects.select_for_update(no_key=True).filter(pk=user_id)
             .values_list("pk", flat=True))
        yield


def make_child(parent: ApiToken, name: str,
               expires_at: datetime | None) -> tuple[ApiToken, str]:
    """A token made by parent's request: it expires no later than parent (None: as late
    as parent) and carries parent's project revocations. 401 if parent died meanwhile."""
    with owner_locked(parent.user_id):
        live = ApiToken.objects.filter(
            Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()),
            pk=parent.pk, revoked=False).first()
        if live is None:
            raise invalid_token("The token is unknown or revoked.")
        child, raw = create_token(live.user, name, bounded_expiry(expires_at, live.expires_at),
                                  parent=live)
        TokenRevocation.objects.bulk_create(
            TokenRevocation(token=child, project_id=v.project_id, revoked_by_id=v.revoked_by_id)
            for v in TokenRevocation.objects.filter(token=live))
    return child, raw


def bounded_expiry(wanted: datetime | None, bound: datetime | None) -> datetime | None:
    """A child's expiry: what was asked, never later than its parent's (403 if asked)."""
    if bound is None:
        return wanted
    if wanted is None:
        return bound
    if wanted > bound:
        raise forbidden(OUTLIVES_PARENT.format(bound.isoformat()))
    return wanted


def set_expiry(token: ApiToken, expires_at: datetime | None, narrow_only: bool) -> None:
    """Set the token's expiry and bring every token made from it to no later than that.
    narrow_only (a token's request): clearing or extending the expiry is 403."""
    with owner_locked(token.user_id):
        current = ApiToken.objects.filter(pk=token.pk).values_list("expires_at", flat=True)[0]
        if narrow_only and not _narrower(expires_at, current):
            raise forbidden(NOT_NARROWER)
        ApiToken.objects.filter(pk=token.pk).update(expires_at=expires_at)
        if expires_at is not None:
            (ApiToken.objects.filter(pk__in=lineage(token.pk))
             .filter(Q(expires_at__isnull=True) | Q(expires_at__gt=expires_at))
             .update(expires_at=expires_at))
    token.expires_at = expires_at


def _narrower(wanted: datetime | None, current: datetime | None) -> bool:
    if wanted is None:
        return current is None  # clearing is a no-op only when there was no expiry
    return current is None or wanted <= current


def revoke(token: ApiToken) -> list[int]:
    """End the token and every token made from it; the IDs this ended (not ended before)."""
    with owner_locked(token.user_id):
        live = ApiToken.objects.filter(pk__in=lineage(token.pk), revoked=False)
        ended = list(live.values_list("pk", flat=True))
        ApiToken.objects.filter(pk__in=ended).update(revoked=True)
    token.revoked = True
    return ended


def revoke_for_project(token: ApiToken, project: Project, actor: User) -> list[int]:
    """Take the token's and every descendant's access to project away; the IDs whose
    access this took (not taken before)."""
    with owner_locked(token.user_id):
        ids = lineage(token.pk)
        before = set(TokenRevocation.objects.filter(project=project, token_id__in=ids)
                     .values_list("token_id", flat=True))
        taken = [i for i in ids if i not in before]
        TokenRevocation.objects.bulk_create(
            (TokenRevocation(token_id=i, project=project, revoked_by=actor) for i in taken),
            ignore_conflicts=True)
    return taken
