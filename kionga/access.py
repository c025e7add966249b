"""Project access checks used by every view.

Someone who is not a member of a project gets 404 for its objects, never 403:
a 403 would confirm that another tenant's object exists.

A token a project's admin revoked for that project (kionga.models.TokenRevocation)
makes its holder no member of it for that request: kionga.tokens marks the user
(kionga.token_scope), and every check here leaves those projects out.

A check that finds a token's holder a member of the project records that the token
reached it (kionga.token_use): what the project's admins may list of their tokens.
"""

from __future__ import annotations

import uuid
from typing import TypeVar

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import Model, OuterRef, QuerySet, Subquery

from kionga import token_use
from kionga.errors import forbidden, not_found
from kionga.models import Membership, Project, Role
from kionga.token_scope import blocked_projects

__all__ = ["blocked_projects"]  # re-exported for the apps' own membership queries

ROLE_RANK: dict[str, int] = {Role.VIEWER: 1, Role.EDITOR: 2, Role.ADMIN: 3}

AnyUser = User | AnonymousUser
RowT = TypeVar("RowT", bound=Model)


def parse_project_id(project_id: object) -> int:
    """Accept 1 or "1"; anything else is a project nobody can see (404)."""
    if isinstance(project_id, bool):
        raise not_found("Project not found.")
    if isinstance(project_id, int):
        return project_id
    if isinstance(project_id, str) and project_id.isdigit() and len(project_id) < 19:
        return int(project_id)
    raise not_found("Project not found.")


def membership_of(user: AnyUser, project_id: int) -> Membership | None:
    if not user.is_authenticated or project_id in blocked_projects(user):
        return None
    found = Membership.objects.select_related("project")
    return found.filter(project_id=project_id, user_id=user.pk).first()


def role_of(user: AnyUser, project_id: int) -> str | None:
    membership = membership_of(user, project_id)
    return membership.role if membership else None


def check_project_access(user: AnyUser, project_id: object, min_role: str = Role.VIEWER) -> Project:
    """The project if user has at least min_role in it; 404 if not a member, 403 if too low."""
    membership = membership_of(user, parse_project_id(project_id))
    if membership is not None:
        token_use.note(user, membership.project_id)
    check_role(membership.role if membership else None, min_role, "Project not found.")
    assert membership is not None
    return membership.project


def check_role(role: str | None, min_role: str, missing: str) -> None:
    """404 (`missing`) for a non-member (role None), 403 for a role below min_role."""
    _check_role_name(min_role)
    if role is None:
        raise not_found(missing)
    if ROLE_RANK[role] < ROLE_RANK[min_role]:
        raise forbidden(f"This needs the {min_role} role in the project; you are {role}.")


def check_row_access(rows: QuerySet[RowT], row_id: object, user: AnyUser, min_role: str,
                     missing: str) -> RowT:
    """The row if the caller may see it, loaded with the caller's role in one query:
    404 (`missing`) when there is no such row, its ID is malformed or the caller is not
    a member of its project; 403 for a role below min_role."""
    try:
        pk = uuid.UUID(str(row_id))
    except ValueError:
        raise not_found(missing) from None
    found = rows.filter(pk=pk).annotate(caller_role=role_in_project(user)).first()
    role = getattr(found, "caller_role", None)
    if found is not None and role is not None:
        # Every row checked here belongs to a project (role_in_project reads project_id).
        token_use.note(user, found.project_id)  # type: ignore[attr-defined]
    check_role(role, min_role, missing)
    assert found is not None
    return found


def role_in_project(user: AnyUser, project_field: str = "project_id") -> Subquery:
    """Annotation: the caller's role in the row's project (None when not a member), so a
    view can load an object and authorize it in one query."""
    # No account has pk 0: an anonymous caller is a member of nothing.
    user_id: int = user.pk if user.is_authenticated else 0
    found = Membership.objects.filter(project_id=OuterRef(project_field), user_id=user_id)
    blocked = blocked_projects(user)
    if blocked:
        found = found.exclude(project_id__in=blocked)
    return Subquery(found.values("role")[:1])


def projects_of(user: AnyUser, min_role: str = Role.VIEWER) -> QuerySet[Project]:
    """Projects where user has at least min_role (for list endpoints and filters)."""
    _check_role_name(min_role)
    if not user.is_authenticated:
        return Project.objects.none()
    roles = [name for name, rank in ROLE_RANK.items() if rank >= ROLE_RANK[min_role]]
    found = Project.objects.filter(memberships__user_id=user.pk, memberships__role__in=roles)
    blocked = blocked_projects(user)
    return found.exclude(pk__in=blocked) if blocked else found


def _check_role_name(role: str) -> None:
    # A typo in a view's min_role is a programming error, not a client error.
    if role not in ROLE_RANK:
        raise ValueError(f"unknown role {role!r}")
