"""One-time set-password links of invitations (docs/decisions/invitation-links.md).

An invitation to an email address nobody here has makes an inactive account without a
usable password (kionga.models.InvitedAccount), and the email carries
``/welcome/<invitation id>/<token>``: the token is Django's password-reset token
(PasswordResetTokenGenerator, under its own salt), which hashes the account's password
and last sign-in, so it stops working once a password is set: one use. It expires with
PASSWORD_RESET_TIMEOUT (as long as an invitation), and the invitation must still be
pending. Setting the password activates the account, accepts the invitation and signs
the person in.
"""

from __future__ import annotations

import uuid
from typing import Final

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.db import transaction
from django.urls import reverse

from kionga.models import Invitation, InvitedAccount, Membership
from kionga.projects import invitations


class _LinkTokens(PasswordResetTokenGenerator):
    key_salt = "kionga.invitation_links"


TOKENS: Final = _LinkTokens()


class LinkRefused(Exception):
    """The link is wrong, used, expired, or its invitation is no longer pending."""


def link_for(invitation: Invitation, account: User) -> str:
    path = reverse("welcome", args=[invitation.pk, TOKENS.make_token(account)])
    return settings.KIONGA_PUBLIC_URL + path


def check_link(invitation_id: uuid.UUID, token: str) -> Invitation:
    """The pending invitation whose invitee is a waiting invited account that token was
    made for; LinkRefused otherwise (one reason for every case: nothing to guess from)."""
    found = (Invitation.objects.select_related("invitee", "project")
             .filter(pk=invitation_id, invitee__invited_account__isnull=False).first())
    if found is None or invitations.status_of(found) != Invitation.Status.PENDING \
            or not TOKENS.check_token(found.invitee, token):
        raise LinkRefused()
    return found


@transaction.atomic
def do_set_password(invitation_id: uuid.UUID, token: str, password: str) -> Membership:
    """Activate the invited account with this password and accept the invitation."""
    invitation = check_link(invitation_id, token)
    assert invitation.invitee is not None  # check_link found one
    account = User.objects.select_for_update().get(pk=invitation.invitee.pk)
    if not TOKENS.check_token(account, token):  # two tabs at once: one wins
        raise LinkRefused()
    account.set_password(password)
    account.is_active = True
    account.save(update_fields=["password", "is_active"])
    InvitedAccount.objects.filter(user=account).delete()
    return invitations.do_accept(account, invitation.pk)
