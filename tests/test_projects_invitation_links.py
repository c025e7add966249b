"""Inviting an email address nobody here has: after the invite commits, the gateway's
worker makes an inactive account with no usable password for it and emails a one-time
link; the person chooses a password there and lands signed in on the designer, a member
with the invited role. The link works once, expires with its invitation, and dies with a
revoked one. A person who has an account is emailed a notice (accept where they sign
in); a username nobody has gets nothing. The invite's answer is the same in every case
(tests/test_projects_invitation_oracle.py)."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client
from django.utils import timezone

from kionga.models import AuditEvent, Invitation, InvitedAccount, Membership, Project
from kionga.projects.invitations import _send_delivery
from kionga.sign_in import forget_failures
from kionga.tasks import deliver_invitation
from tests.conftest import Api
from tests.projects_helpers import members_url

LINK = re.compile(r"http://127\.0\.0\.1:8000(/welcome/\S+)")


@pytest.fixture
def invite(api: Api, acme: Project, alice: User,
           django_capture_on_commit_callbacks: Any) -> Callable[[str, str], str]:
    """alice invites through the API; the delivery is queued on commit, and run here as
    the worker runs it. The invitation's ID."""
    admin = api.client_for(alice)

    def send(typed: str, role: str = "editor") -> str:
        with django_capture_on_commit_callbacks() as queued:
            answer = admin.post(members_url(acme), {"user": typed, "role": role})
        assert answer.status_code == 202, answer.content
        invitation_id = str(answer.json()["id"])
        # The delivery task is sent once the invitation is stored.
        assert [c.args for c in queued if getattr(c, "func", None) is _send_delivery] \
            == [(uuid.UUID(invitation_id),)]
        deliver_invitation.run(invitation_id)
        return invitation_id
    return send


def link_in_last_email() -> str:
    found = LINK.search(str(mail.outbox[-1].body))
    assert found, mail.outbox[-1].body
    return found.group(1)


def choose_password(client: Client, path: str, password: str = "Fresh-Pass-4821") -> Any:
    return client.post(path, {"new_password1": password, "new_password2": password})


def test_an_unknown_email_gets_an_account_and_a_link_that_signs_them_in(
        invite: Callable[..., str], acme: Project) -> None:
    invitation_id = invite("Newbie@Example.com")
    account = User.objects.get(email="newbie@example.com")
    assert not account.is_active and not account.has_usable_password()
    assert InvitedAccount.objects.filter(user=account).exists()
    message = mail.outbox[-1]
    assert message.to == ["newbie@example.com"] and "alice invited you to Acme" in message.subject
    path = link_in_last_email()
    assert path.startswith(f"/welcome/{invitation_id}/")

    client = Client()
    page = client.get(path)
    assert page.status_code == 200 and b"newbie@example.com" in page.content
    answer = choose_password(client, path)
    assert answer.status_code == 302 and answer["Location"] == "/designer/"
    assert client.get("/designer/").status_code == 200
    account.refresh_from_db()
    assert account.is_active and account.check_password("Fresh-Pass-4821")
    assert not InvitedAccount.objects.filter(user=account).exists()
    assert Membership.objects.get(project=acme, user=account).role == "editor"
    assert Invitation.objects.get(pk=invitation_id).status == "accepted"
    assert AuditEvent.objects.filter(action="member.added", actor=account).exists()
    # The password works on the sign-in page from now on (from an address with no
    # failed sign-ins counted by other tests).
    forget_failures("127.0.0.1")
    assert Client().post("/", {"username": "newbie@example.com",
                               "password": "Fresh-Pass-4821"}).status_code == 302


def test_the_link_works_once(invite: Callable[..., str]) -> None:
    invite("once@example.com")
    path = link_in_last_email()
    assert choose_password(Client(), path).status_code == 302
    again = Client()
    assert again.get(path).status_code == 404
    refused = choose_password(again, path, "Another-Pass-9137")
    assert refused.status_code == 404 and b"used already" in refused.content
    assert "_auth_user_id" not in again.session
    assert User.objects.get(email="once@example.com").check_password("Fresh-Pass-4821")


def test_a_weak_password_is_refused_and_the_link_still_works(
        invite: Callable[..., str]) -> None:
    invite("weak@example.com")
    path = link_in_last_email()
    page = choose_password(Client(), path, "password")
    assert page.status_code == 200 and b"too common" in page.content
    assert choose_password(Client(), path).status_code == 302


@pytest.mark.parametrize("ending", ["expired", "revoked"])
def test_the_link_ends_with_its_invitation(invite: Callable[..., str], ending: str) -> None:
    invitation_id = invite("late@example.com")
    path = link_in_last_email()
    if ending == "expired":
        Invitation.objects.filter(pk=invitation_id).update(
            expires_at=timezone.now() - timedelta(seconds=1))
    else:
        Invitation.objects.filter(pk=invitation_id).update(status="revoked")
    assert choose_password(Client(), path).status_code == 404
    assert not User.objects.get(email="late@example.com").is_active


def test_inviting_again_uses_the_same_account(invite: Callable[..., str],
                                              mallory: User, api: Api,
                                              evil: Project,
                                              django_capture_on_commit_callbacks: Any) -> None:
    invite("twice@example.com")
    invite("twice@example.com", "viewer")
    with django_capture_on_commit_callbacks():
        other = api.client_for(mallory).post(members_url(evil), {"user": "twice@example.com",
                                                                  "role": "admin"})
    deliver_invitation.run(str(other.json()["id"]))
    assert User.objects.filter(email="twice@example.com").count() == 1
    assert len(mail.outbox) == 3
    assert choose_password(Client(), link_in_last_email()).status_code == 302
    account = User.objects.get(email="twice@example.com")
    assert Membership.objects.get(user=account).project == evil
    # acme's invitation waits for them where they sign in.
    assert Invitation.objects.get(project__slug="acme", invitee=account).status == "pending"


def test_a_person_with_an_account_gets_a_notice_without_a_link(
        invite: Callable[..., str], charlie: User) -> None:
    charlie.email = "charlie@example.com"
    charlie.save()
    invite("charlie@example.com")
    message = mail.outbox[-1]
    assert message.to == ["charlie@example.com"]
    assert "http://127.0.0.1:8000/approvals/" in message.body and "/welcome/" not in message.body
    assert User.objects.filter(email="charlie@example.com").count() == 1


@pytest.mark.parametrize("typed", ["nobody", "gone@example.com"])
def test_nothing_is_sent_for_nobody_or_an_inactive_person(invite: Callable[..., str],
                                                          typed: str) -> None:
    User.objects.create_user("gone", email="gone@example.com", is_active=False)
    invite(typed)
    assert mail.outbox == []
    assert not InvitedAccount.objects.exists()
