"""Members of a project: list, change a role, remove. People join by accepting an
invitation (kionga.projects.invitations).

A project always keeps an admin: the last one can be neither removed nor demoted
(409 last_admin). The check runs under a lock on the project's admin rows, so two
admins demoting each other at once cannot both succeed. Removing someone takes
effect at once: kionga.access reads memberships on every request, and a run's
internal calls re-read the starter's grant (runs.credentials.find_credential,
runs.run_auth.check_grant).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Q

from kionga import audit
from kionga.errors import APIError, not_found
from kionga.models import Membership, Project, Role

LIST_LIMIT = 1000


def member_dict(membership: Membership) -> dict[str, Any]:
    return {"user_id": membership.user_id, "username": membership.user.get_username(),
            "role": membership.role}


def members_of(project: Project) -> list[dict[str, Any]]:
    found = Membership.objects.filter(project=project).select_related("user")
    return [member_dict(m) for m in found.order_by("user__username")[:LIST_LIMIT]]


def check_member(project: Project, user_id: int) -> Membership:
    found = (Membership.objects.select_related("user")
             .filter(project=project, user_id=user_id).first())
    if found is None:
        raise not_found("Member not found.")
    return found


@transaction.atomic
def do_change_role(actor: User, project: Project, user_id: int, role: str) -> Membership:
    membership = _locked_member(project, user_id)
    before = membership.role
    if before == role:
        return membership
    if before == Role.ADMIN:
        _check_not_last_admin(project, "demote")
    membership.role = role
    membership.save(update_fields=["role"])
    audit.record("member.changed", project=project, actor=actor, target_type="user",
                 target_id=user_id, details={"username": membership.user.get_username(),
                                             "from": before, "to": role})
    return membership


@transaction.atomic
def do_remove_member(actor: User, project: Project, user_id: int) -> None:
    membership = _locked_member(project, user_id)
    if membership.role == Role.ADMIN:
        _check_not_last_admin(project, "remove")
    membership.delete()
    audit.record("member.removed", project=project, actor=actor, target_type="user",
                 target_id=user_id, details={"username": membership.user.get_username(),
                                             "role": membership.role})


def _locked_member(project: Project, user_id: int) -> Membership:
    # Lock every admin row first (in id order, as every caller does), then the member:
    # concurrent demotions serialize on the same rows.
    list(Membership.objects.select_for_update().filter(
        Q(role=Role.ADMIN) | Q(user_id=user_id), project=project).order_by("id"))
    return check_member(project, user_id)


def _check_not_last_admin(project: Project, what: str) -> None:
    if Membership.objects.filter(project=project, role=Role.ADMIN).count() <= 1:
        raise APIError(409, "last_admin",
                       f"Cannot {what} the project's last admin: make someone else an admin "
                       "first.")
