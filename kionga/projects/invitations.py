"""Invitations: the only way a project admin brings a person into their project.

Adding a member (POST projects/{id}/members) stores an invitation for whatever the
admin typed, a username or an email address, and answers with it: the same status and
body, after the same queries, whether the name is a person's, nobody's, an inactive
person's or an email several people share. Only the person it names (the active one
with that username, else the only active one with that email, when it was sent) sees
it (GET me/invitations, and above their requests in the approver UI) and becomes a
member with the invited role by accepting it; nobody can accept one that named nobody.
An invitation expires after INVITATION_LIFETIME; the project's admins list and revoke
theirs. Every step is audited. Ops staff still add members directly (the admin site,
`manage.py bootstrap`): docs/decisions/members-join-by-invitation.md.

The one query that tells apart who exists (kionga.projects.invitations._invitee) runs
for every invitation, and nothing the admin sees depends on its answer; a typed
username that is already a member's is 409 already_member, which tells the admin
nothing their member list does not.
"""

from __future__ import annotations

import uuid
from functools import partial
from typing import Any, Final

from django.conf import settings
from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Case, Q, Value, When
from django.utils import timezone

from kionga import audit
from kionga.celery import app as celery_app
from kionga.errors import APIError, not_found
from kionga.models import Invitation, Membership, Project

INVITATION_LIFETIME: Final = settings.KIONGA_INVITATION_LIFETIME
# The gateway worker's task that emails a stored invitation (kionga.tasks).
DELIVER_INVITATION: Final = "kionga.deliver_invitation"
LIST_LIMIT: Final = 200
Status = Invitation.Status


def invitation_dict(invitation: Invitation) -> dict[str, Any]:
    """An invitation as its project's admins see it: what they typed, never whom it
    reached."""
    return {"id": str(invitation.pk), "user": invitation.address, "role": invitation.role,
            "status": status_of(invitation), "invited_by": _name(invitation.invited_by),
            "created_at": invitation.created_at.isoformat(),
            "expires_at": invitation.expires_at.isoformat()}


def my_invitation_dict(invitation: Invitation) -> dict[str, Any]:
    """An invitation as the invited person sees it: which project, which role, who."""
    project = invitation.project
    return {"id": str(invitation.pk),
            "project": {"id": project.pk, "slug": project.slug, "name": project.name},
            "role": invitation.role, "invited_by": _name(invitation.invited_by),
            "created_at": invitation.created_at.isoformat(),
            "expires_at": invitation.expires_at.isoformat()}


def status_of(invitation: Invitation) -> str:
    """The stored status, or expired for a pending one past its deadline."""
    if invitation.status == Status.PENDING and invitation.expires_at <= timezone.now():
        return Status.EXPIRED
    return invitation.status


def address_of(typed: str) -> str:
    """What an invitation keeps of the typed name: a username as typed, an email
    address in lower case (emails are matched case-insensitively)."""
    return typed.lower() if "@" in typed else typed


def check_not_member(project: Project, typed: str) -> None:
    """409 already_member when typed is the username of a member (whom the admin sees in
    the member list anyway); an email address is never checked here."""
    if Membership.objects.filter(project=project, user__username=typed).exists():
        raise APIError(409, "already_member", f"{typed} is already a member; change their "
                                              "role with PATCH instead.")


def do_invite(actor: User, project: Project, typed: str, role: str) -> Invitation:
    """Store (or refresh) the pending invitation of typed to project."""
    check_not_member(project, typed)
    invitee = _invitee(typed)
    values = {"role": role, "invitee": invitee, "invited_by": actor,
              "expires_at": timezone.now() + INVITATION_LIFETIME}
    invitation = _upsert_pending(project, address_of(typed), values)
    # The email (and the account an unknown email address gets) after the answer, in the
    # worker: this request runs the same queries whoever typed names.
    transaction.on_commit(partial(_send_delivery, invitation.pk), robust=True)
    audit.record("invitation.created", project=project, actor=actor,
                 target_type="invitation", target_id=invitation.pk,
                 details={"user": invitation.address, "role": role,
                          "invitee_id": invitee.pk if invitee else None})
    return invitation


def _send_delivery(invitation_id: uuid.UUID) -> None:
    celery_app.send_task(DELIVER_INVITATION, args=[str(invitation_id)])


def project_invitations(project: Project) -> list[dict[str, Any]]:
    """The project's invitations, newest first, whatever their status."""
    found = (Invitation.objects.filter(project=project).select_related("invited_by")
             .order_by("-created_at", "-id"))
    return [invitation_dict(i) for i in found[:LIST_LIMIT]]


def invitations_for(user: User) -> list[dict[str, Any]]:
    """The invitations user may still accept, newest first."""
    found = (Invitation.objects.filter(invitee=user, status=Status.PENDING,
                                       expires_at__gt=timezone.now())
             .select_related("project", "invited_by").order_by("-created_at", "-id"))
    return [my_invitation_dict(i) for i in found[:LIST_LIMIT]]


@transaction.atomic
def do_accept(user: User, invitation_id: uuid.UUID) -> Membership:
    """Make user a member with the invited role; the invitation is then accepted."""
    invitation = _locked(Q(invitee=user), invitation_id)
    _check_pending(invitation)
    try:
        with transaction.atomic():
            membership = Membership.objects.create(project=invitation.project, user=user,
                                                   role=invitation.role)
    except IntegrityError:
        raise APIError(409, "already_member", "You are already a member of this project; "
                                              "decline the invitation instead.") from None
    _answer(invitation, Status.ACCEPTED, user)
    audit.record("member.added", project=invitation.project, actor=user, target_type="user",
                 target_id=user.pk, details={"username": user.get_username(),
                                             "role": invitation.role,
                                             "invited_by": _name(invitation.invited_by),
                                             "invitation_id": str(invitation.pk)})
    return membership


@transaction.atomic
def do_decline(user: User, invitation_id: uuid.UUID) -> None:
    invitation = _locked(Q(invitee=user), invitation_id)
    _check_pending(invitation)
    _answer(invitation, Status.DECLINED, user)


@transaction.atomic
def do_revoke(actor: User, project: Project, invitation_id: uuid.UUID) -> None:
    """Withdraw a pending (or expired) invitation; revoking it again changes nothing."""
    invitation = _locked(Q(project=project), invitation_id)
    if invitation.status == Status.REVOKED:
        return
    if invitation.status != Status.PENDING:
        raise _not_pending(invitation)
    _answer(invitation, Status.REVOKED, actor)


def _invitee(typed: str) -> User | None:
    """The active person typed names: the one with this username, else (an address)
    the only one with this email. The same one query whatever is typed or found."""
    found = list(User.objects.filter(Q(username=typed) | Q(email__iexact=typed),
                                     is_active=True)
                 .order_by(Case(When(username=typed, then=Value(0)), default=Value(1)))[:2])
    if found and found[0].get_username() == typed:
        return found[0]
    return found[0] if len(found) == 1 and "@" in typed else None


def _upsert_pending(project: Project, address: str, values: dict[str, Any]) -> Invitation:
    # One pending invitation per address (invitation_one_pending): a second refreshes it;
    # of two at once, the loser refreshes the winner's.
    for attempt in range(2):
        try:
            with transaction.atomic():
                found, _ = Invitation.objects.update_or_create(
                    project=project, address=address, status=Status.PENDING, defaults=values)
                return found
        except IntegrityError:
            if attempt:
                raise
    raise AssertionError("unreachable")


def _locked(scope: Q, invitation_id: uuid.UUID) -> Invitation:
    found = (Invitation.objects.select_for_update(of=("self",))
             .select_related("project", "invited_by").filter(scope, pk=invitation_id).first())
    if found is None:
        raise not_found("Invitation not found.")
    return found


def _check_pending(invitation: Invitation) -> None:
    if status_of(invitation) != Status.PENDING:
        raise _not_pending(invitation)


def _not_pending(invitation: Invitation) -> APIError:
    status = status_of(invitation)
    return APIError(409, "invitation_not_pending", f"This invitation is {status}.",
                    {"status": status})


def _answer(invitation: Invitation, status: str, actor: User) -> None:
    invitation.status = status
    invitation.answered_at = timezone.now()
    invitation.save(update_fields=["status", "answered_at"])
    audit.record(f"invitation.{status}", project=invitation.project, actor=actor,
                 target_type="invitation", target_id=invitation.pk,
                 details={"user": invitation.address, "role": invitation.role})


def _name(user: User | None) -> str | None:
    return user.get_username() if user is not None else None
