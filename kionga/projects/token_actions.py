"""A person's own API tokens, and a project admin's revocation of a token's access.

A token is shown in full once, in the answer that creates it; afterwards only its
prefix. Revoking one's own token ends it everywhere. A project admin cannot end
another person's token, only its access to their project: a TokenRevocation row,
which kionga.access honours on every request (kionga.tokens.signed_in_user). A
project's admins see only the tokens that reached their project (kionga.token_use) or
that they revoked, with the last use there: never what a member does elsewhere.

Who acts: a signed-in person (session; `acting` None) manages all of their tokens. A
token's request (`acting` the token) makes children only, manages only itself and the
tokens made from it, and never clears or extends an expiry (kionga.token_lineage).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Final

from django.contrib.auth.models import User
from django.db.models import OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from kionga import audit, token_lineage
from kionga.errors import forbidden, invalid_field, not_found
from kionga.models import ApiToken, Project, TokenRevocation, TokenUse
from kionga.tokens import create_token

LIST_LIMIT = 500
NOT_FROM_THIS_TOKEN: Final = ("A token may manage only itself and the tokens made from it; "
                              "sign in to manage your other tokens.")


def tokens_of(user: User) -> list[dict[str, Any]]:
    found = ApiToken.objects.filter(user=user).order_by("-created_at", "-id")
    return [t.to_dict() for t in found[:LIST_LIMIT]]


def check_expiry(expires_at: datetime | None) -> datetime | None:
    if expires_at is not None and expires_at <= timezone.now():
        raise invalid_field("expires_at", "The expiry must be in the future.")
    return expires_at


def check_own_token(user: User, acting: ApiToken | None, token_id: int) -> ApiToken:
    """One of user's tokens (404 otherwise) that the caller may manage: any, for a
    signed-in person; for a token, itself or one made from it (403 otherwise)."""
    found = ApiToken.objects.filter(user=user, pk=token_id).first()
    if found is None:
        raise not_found("Token not found.")
    if acting is not None and acting.pk not in token_lineage.ancestry(found.pk):
        raise forbidden(NOT_FROM_THIS_TOKEN)
    return found


def do_create_token(user: User, acting: ApiToken | None, name: str,
                    expires_at: datetime | None) -> dict[str, Any]:
    """A token of user's; made by a token's request, a child of that token."""
    wanted = check_expiry(expires_at)
    token, raw = (create_token(user, name, wanted) if acting is None
                  else token_lineage.make_child(acting, name, wanted))
    audit.record("token.created", actor=user, target_type="token", target_id=token.pk,
                 details={"name": name, "prefix": token.prefix, "parent_id": token.parent_id})
    return {**token.to_dict(), "token": raw}


def do_update_token(user: User, acting: ApiToken | None, token: ApiToken,
                    changes: dict[str, Any]) -> ApiToken:
    if "expires_at" in changes:
        expires_at = check_expiry(changes["expires_at"])
        token_lineage.set_expiry(token, expires_at, narrow_only=acting is not None)
    if "name" in changes:
        token.name = changes["name"]
        token.save(update_fields=["name"])
    return token


def do_revoke_token(user: User, token: ApiToken) -> None:
    """End the token and every token made from it (audited once, with how many more)."""
    ended = token_lineage.revoke(token)
    if not ended:
        return
    audit.record("token.revoked", actor=user, target_type="token", target_id=token.pk,
                 details={"name": token.name, "prefix": token.prefix,
                          "descendants": len([i for i in ended if i != token.pk])})


def do_revoke_all_tokens(actor: User, owner: User) -> int:
    """End every live token of owner's in one step (ops staff, e.g. for a person who
    left the company); audited once. How many it ended."""
    with token_lineage.owner_locked(owner.pk):
        ended = list(ApiToken.objects.filter(user=owner, revoked=False)
                     .values_list("pk", flat=True))
        ApiToken.objects.filter(pk__in=ended).update(revoked=True)
    if ended:
        audit.record("token.revoked_all", actor=actor, target_type="user", target_id=owner.pk,
                     details={"username": owner.get_username(), "tokens": len(ended)})
    return len(ended)


def project_tokens(project: Project) -> list[dict[str, Any]]:
    """Live tokens that reached this project (kionga.token_use) or that it revoked, with
    the last use here: nothing of where else their owners use them."""
    used_here = TokenUse.objects.filter(project=project, token_id=OuterRef("pk"))
    found = (_project_tokens(project).filter(revoked=False).select_related("user")
             .annotate(used_here_at=Subquery(used_here.values("last_used_at")[:1]))
             .order_by("user__username", "-created_at", "-id"))
    revoked = set(TokenRevocation.objects.filter(project=project)
                  .values_list("token_id", flat=True))
    return [{**t.to_dict(), "last_used_at": _iso(getattr(t, "used_here_at", None)),
             "owner": t.user.get_username(), "revoked_in_project": t.pk in revoked}
            for t in found[:LIST_LIMIT]]


def check_project_token(project: Project, token_id: int) -> ApiToken:
    """A token that reached this project or that it revoked; any other is 404, as the
    list does not show it."""
    found = _project_tokens(project).filter(pk=token_id).first()
    if found is None:
        raise not_found("Token not found.")
    return found


def _project_tokens(project: Project) -> QuerySet[ApiToken]:
    used = TokenUse.objects.filter(project=project).values("token_id")
    revoked = TokenRevocation.objects.filter(project=project).values("token_id")
    return ApiToken.objects.filter(Q(pk__in=used) | Q(pk__in=revoked))


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def do_revoke_for_project(actor: User, project: Project, token: ApiToken) -> None:
    """Take the token's access to project away, and that of every token made from it."""
    taken = token_lineage.revoke_for_project(token, project, actor)
    if not taken:
        return  # already revoked here: the same outcome
    audit.record("token.revoked_for_project", project=project, actor=actor,
                 target_type="token", target_id=token.pk,
                 details={"name": token.name, "prefix": token.prefix,
                          "owner": token.user.get_username(),
                          "descendants": len([i for i in taken if i != token.pk])})
