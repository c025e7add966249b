"""Ops staff invite from the admin (Invitations → Add: project, user name or email
address, role): the same action as the API's, so the invitation is stored pending and
its email goes out after the commit; a current member's user name is refused on the
form and nothing is stored."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.test import Client

from kionga.models import AuditEvent, Invitation, Project
from kionga.projects.invitations import _send_delivery

ADD = "/admin/kionga/invitation/add/"


def test_staff_invite_an_email_address(staff: Client, acme: Project,
                                       django_capture_on_commit_callbacks: Any) -> None:
    assert staff.get(ADD).status_code == 200
    with django_capture_on_commit_callbacks() as queued:
        answer = staff.post(ADD, {"project": acme.pk, "address": "Pat@Example.com",
                                  "role": "editor"})
    assert answer.status_code == 302, answer.content
    invitation = Invitation.objects.get(project=acme)
    assert (invitation.address, invitation.role, invitation.status) == (
        "pat@example.com", "editor", "pending")
    assert invitation.invited_by is not None and invitation.invited_by.username == "ops"
    assert AuditEvent.objects.filter(action="invitation.created").count() == 1
    assert [c.args for c in queued if getattr(c, "func", None) is _send_delivery] == [
        (invitation.pk,)]


def test_a_member_is_refused_on_the_form(staff: Client, acme: Project, bob: User) -> None:
    page = staff.post(ADD, {"project": acme.pk, "address": "bob", "role": "admin"})
    assert page.status_code == 200 and b"bob is already a member" in page.content
    assert not Invitation.objects.exists()


def test_invitations_stay_read_only_once_made(staff: Client, acme: Project) -> None:
    staff.post(ADD, {"project": acme.pk, "address": "quinn@example.com", "role": "viewer"})
    invitation = Invitation.objects.get()
    page = staff.post(f"/admin/kionga/invitation/{invitation.pk}/change/",
                      {"project": acme.pk, "address": "other@example.com", "role": "admin"})
    assert page.status_code in (200, 403)
    invitation.refresh_from_db()
    assert (invitation.address, invitation.role) == ("quinn@example.com", "viewer")
