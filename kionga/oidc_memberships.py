"""Applies KIONGA_OIDC_GROUP_ROLES (kionga.oidc_group_roles) at a sign-in through the
provider: the person's roles in the mapped projects follow their groups."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction

from kionga import audit
from kionga.access import ROLE_RANK
from kionga.models import Membership, Project
from kionga.oidc_group_roles import GroupRole


def wanted_roles(mapping: tuple[GroupRole, ...], groups: list[str]) -> dict[str, str | None]:
    """Every mapped project's slug -> the highest role `groups` give there (None: none)."""
    held = set(groups)
    wanted: dict[str, str | None] = {entry.project: None for entry in mapping}
    for entry in mapping:
        current = wanted[entry.project]
        if entry.group in held and (current is None
                                    or ROLE_RANK[entry.role] > ROLE_RANK[current]):
            wanted[entry.project] = entry.role
    return wanted


def groups_of(claims: dict[str, Any], claim: str) -> list[str]:
    """The claim's group names (a list of strings; anything else counts as none)."""
    value = claims.get(claim)
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [item for item in value if isinstance(item, str)]
    return []


@transaction.atomic
def do_sync_memberships(user: User, mapping: tuple[GroupRole, ...],
                        groups: list[str]) -> None:
    """Set user's memberships in the mapped projects to what their groups give; audited
    as the person's own member.added / member.changed / member.removed (source oidc)."""
    wanted = wanted_roles(mapping, groups)
    projects = {p.slug: p for p in Project.objects.filter(slug__in=list(wanted))}
    held = {m.project_id: m for m in Membership.objects.select_for_update()
            .filter(user=user, project__in=list(projects.values()))}
    for slug, role in wanted.items():
        project = projects.get(slug)
        if project is None:  # a mapped project that does not exist (yet): nothing to do
            continue
        membership = held.get(project.pk)
        details: dict[str, Any] = {"username": user.get_username(), "source": "oidc"}
        if role is None and membership is not None:
            membership.delete()
            audit.record("member.removed", project=project, actor=user, target_type="user",
                         target_id=user.pk, details={**details, "role": membership.role})
        elif role is not None and membership is None:
            Membership.objects.create(project=project, user=user, role=role)
            audit.record("member.added", project=project, actor=user, target_type="user",
                         target_id=user.pk, details={**details, "role": role})
        elif role is not None and membership is not None and membership.role != role:
            audit.record("member.changed", project=project, actor=user, target_type="user",
                         target_id=user.pk,
                         details={**details, "from": membership.role, "to": role})
            membership.role = role
            membership.save(update_fields=["role"])
