"""A person's own API tokens, and a project admin's revocation of a token's access.

A token is shown in full once, in the answer that creates it; afterwards only its
prefix. Revoking one's own token ends it everywhere. A project admin cannot end
another person's token, only its access to their project: a TokenRevocation row,
which kionga.access honours on every request (kionga.tokens.signed_in_user).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.utils import timezone

from kionga import audit
from kionga.errors import invalid_field, not_found
from kionga.models import ApiToken, Membership, Project, TokenRevocation
from kionga.tokens import create_token

LIST_LIMIT = 500


def tokens_of(user: User) -> list[dict[str, Any]]:
    found = ApiToken.objects.filter(user=user).order_by("-created_at", "-id")
    return [t.to_dict() for t in found[:LIST_LIMIT]]


def check_expiry(expires_at: datetime | None) -> datetime | None:
    if expires_at is not None and expires_at <= timezone.now():
        raise invalid_field("expires_at", "The expiry must be in the future.")
    return expires_at


def check_own_token(user: User, token_id: int) -> ApiToken:
    found = ApiToken.objects.filter(user=user, pk=token_id).first()
    if found is None:
        raise not_found("Token not found.")
    return found


def do_create_token(user: User, name: str, expires_at: datetime | None) -> dict[str, Any]:
    token, raw = create_token(user, name, check_expiry(expires_at))
    audit.record("token.created", actor=user, target_type="token", target_id=token.pk,
                 details={"name": name, "prefix": token.prefix})
    return {**token.to_dict(), "token": raw}


def do_update_token(user: User, token: ApiToken, changes: dict[str, Any]) -> ApiToken:
    if "expires_at" in changes:
        check_expiry(changes["expires_at"])
    for field, value in changes.items():
        setattr(token, field, value)
    token.save(update_fields=list(changes))
    return token


def do_revoke_token(user: User, token: ApiToken) -> None:
    if token.revoked:
        return
    ApiToken.objects.filter(pk=token.pk).update(revoked=True)
    token.revoked = True
    audit.record("token.revoked", actor=user, target_type="token", target_id=token.pk,
                 details={"name": token.name, "prefix": token.prefix})


def project_tokens(project: Project) -> list[dict[str, Any]]:
    """Live tokens of the project's members, with whether this project revoked each."""
    members = Membership.objects.filter(project=project).values("user_id")
    found = (ApiToken.objects.filter(user_id__in=members, revoked=False)
             .select_related("user").order_by("user__username", "-created_at", "-id"))
    revoked = set(TokenRevocation.objects.filter(project=project)
                  .values_list("token_id", flat=True))
    return [{**t.to_dict(), "owner": t.user.get_username(),
             "revoked_in_project": t.pk in revoked} for t in found[:LIST_LIMIT]]


def check_member_token(project: Project, token_id: int) -> ApiToken:
    """A token of a member of project (another person's token is 404 for everyone else)."""
    members = Membership.objects.filter(project=project).values("user_id")
    found = ApiToken.objects.filter(pk=token_id, user_id__in=members).first()
    if found is None:
        raise not_found("Token not found.")
    return found


def do_revoke_for_project(actor: User, project: Project, token: ApiToken) -> None:
    try:
        with transaction.atomic():
            TokenRevocation.objects.create(token=token, project=project, revoked_by=actor)
    except IntegrityError:
        return  # already revoked here: the same outcome
    audit.record("token.revoked_for_project", project=project, actor=actor,
                 target_type="token", target_id=token.pk,
                 details={"name": token.name, "prefix": token.prefix,
                          "owner": token.user.get_username()})
