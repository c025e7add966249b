"""An invitation's email, sent by the gateway's worker after the invitation is stored
(kionga.tasks.deliver_invitation): the invite request itself runs the same queries
whoever it names (docs/decisions/members-join-by-invitation.md), so what differs by
person happens here, out of the admin's sight.

- The address names an active person: they are told, and accept where they sign in.
- An email address nobody here has: an invited account is made for it
  (kionga.models.InvitedAccount) and the email carries its one-time set-password link
  (kionga.invitation_links). Inviting it again (here or in another project) uses the
  same account and sends a new link.
- Anything else (a username nobody has, an email several people share, an inactive
  person's): nothing is sent.

Sent with Django's email backend (DJANGO_EMAIL_BACKEND; the console by default).
"""

from __future__ import annotations

import secrets
import uuid

from django.conf import settings
from django.contrib.auth.models import User
from django.core.mail import send_mail
from django.db import transaction

from kionga import invitation_links
from kionga.models import Invitation, InvitedAccount
from kionga.projects import invitations


def do_deliver(invitation_id: uuid.UUID) -> str:
    """Send the invitation's email (making the invited account when due); what was sent:
    "notice", "link" or "nothing". Safe to run again: the same account, a new link."""
    with transaction.atomic():
        invitation = (Invitation.objects.select_for_update(of=("self",))
                      .select_related("project", "invited_by", "invitee")
                      .filter(pk=invitation_id).first())
        if invitation is None or invitations.status_of(invitation) != Invitation.Status.PENDING:
            return "nothing"
        account = invitation.invitee if invitation.invitee and invitation.invitee.is_active \
            else _invited_account(invitation.address)
        if account is None:
            return "nothing"
        if invitation.invitee_id != account.pk:
            invitation.invitee = account
            invitation.save(update_fields=["invitee"])
    if not account.email:  # a person found by username, with no address to write to
        return "nothing"
    kind = "notice" if account.is_active else "link"
    subject, body = _message(invitation, account, kind)
    send_mail(subject, body, None, [account.email])
    return kind


def _invited_account(address: str) -> User | None:
    """The waiting invited account of this email address, made now when nobody here has
    the address; None for a username or an address a real account has."""
    if "@" not in address:
        return None
    waiting = User.objects.filter(email__iexact=address, invited_account__isnull=False).first()
    if waiting is not None:
        return waiting
    if User.objects.filter(email__iexact=address).exists():
        return None
    taken = User.objects.filter(username=address).exists()
    account = User(username=address if not taken else f"{address}-{secrets.token_hex(3)}",
                   email=address, is_active=False)
    account.set_unusable_password()
    account.save()
    InvitedAccount.objects.create(user=account)
    return account


def _message(invitation: Invitation, account: User, kind: str) -> tuple[str, str]:
    project = invitation.project
    who = invitation.invited_by.get_username() if invitation.invited_by else "An administrator"
    subject = f"{who} invited you to {project.name} on Kionga"
    offer = f"{who} invited you to the project {project.name} as {invitation.role}."
    expires = invitation.expires_at.strftime("%Y-%m-%d %H:%M UTC")
    if kind == "notice":
        where = settings.KIONGA_PUBLIC_URL + "/approvals/"
        return subject, (f"{offer}\n\nSign in and accept or decline it at {where} "
                         f"(until {expires}).\n")
    link = invitation_links.link_for(invitation, account)
    return subject, (f"{offer}\n\nChoose your password and join with this link (it works "
                     f"once, until {expires}):\n\n{link}\n\nYour user name will be "
                     f"{account.get_username()}.\n")
