"""Projects a request's API token may not reach: its holder's memberships there are
ignored for that request (a project admin revoked the token's access:
kionga.models.TokenRevocation). kionga.tokens marks the user; kionga.access reads
the mark. A tiny module of its own: authentication imports it while DRF's settings
are still loading."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_BLOCKED = "_kionga_blocked_projects"


def block_projects(user: Any, project_ids: Iterable[int]) -> None:
    """For this request, user is a member of none of project_ids."""
    setattr(user, _BLOCKED, frozenset(project_ids))


def blocked_projects(user: Any) -> frozenset[int]:
    """The projects this request's credential may not reach, whatever the membership."""
    blocked = getattr(user, _BLOCKED, None)
    return blocked if isinstance(blocked, frozenset) else frozenset()
