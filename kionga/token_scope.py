"""What a request's API token may reach, marked on its user for that request.

- Projects it may not reach: its holder's memberships there are ignored for that
  request (a project admin revoked the token's access: kionga.models.TokenRevocation).
- The token itself, so that a membership check can record that the token reached the
  project (kionga.token_use).

kionga.tokens marks the user; kionga.access reads the marks. A tiny module of its own:
authentication imports it while DRF's settings are still loading."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_BLOCKED = "_kionga_blocked_projects"
_TOKEN = "_kionga_token_id"


def block_projects(user: Any, project_ids: Iterable[int]) -> None:
    """For this request, user is a member of none of project_ids."""
    setattr(user, _BLOCKED, frozenset(project_ids))


def blocked_projects(user: Any) -> frozenset[int]:
    """The projects this request's credential may not reach, whatever the membership."""
    blocked = getattr(user, _BLOCKED, None)
    return blocked if isinstance(blocked, frozenset) else frozenset()


def mark_token(user: Any, token_id: int) -> None:
    """This request's user came with the API token token_id."""
    setattr(user, _TOKEN, token_id)


def token_of(user: Any) -> int | None:
    """The API token this request's user came with; None for a session (or nobody)."""
    token_id = getattr(user, _TOKEN, None)
    return token_id if isinstance(token_id, int) else None
