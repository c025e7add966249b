"""KIONGA_OIDC_GROUP_ROLES: the provider's groups decide people's roles in the projects
the mapping names (docs/decisions/oidc-group-roles.md).

Each item is ``GROUP=PROJECT_SLUG:ROLE`` (split at the last ``=`` and the last ``:``,
so a group name may hold either). At each sign-in through the provider, for every
project the mapping names, the person's membership is set to the highest role their
groups give there, and removed when none of their groups maps to it. Projects the
mapping does not name are left alone (invitations and the admin manage those).
This module only parses (settings import it); kionga.oidc_memberships applies it.
"""

from __future__ import annotations

from dataclasses import dataclass

from runner.env import EnvError


@dataclass(frozen=True)
class GroupRole:
    group: str
    project: str
    role: str


def parse(items: list[str]) -> tuple[GroupRole, ...]:
    """The mapping's items; EnvError for one that is not GROUP=PROJECT_SLUG:ROLE."""
    found = []
    for item in items:
        group, equals, target = item.rpartition("=")
        project, colon, role = target.rpartition(":")
        if not (equals and colon and group.strip() and project.strip() and role.strip()):
            raise EnvError(f"KIONGA_OIDC_GROUP_ROLES: {item!r} is not GROUP=PROJECT_SLUG:ROLE")
        found.append(GroupRole(group.strip(), project.strip(), role.strip()))
    return tuple(found)
