"""Adding a member invites them: the person becomes a member only by accepting the
invitation (GET /api/v1/me/invitations, POST …/{id}/accept or …/decline). Invitations
expire after seven days, the project's admins list and revoke them, every step is
audited, and nobody but the person invited sees or answers one."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from kionga.models import AuditEvent, Invitation, Membership, Project, Role
from tests.conftest import Api
from tests.projects_helpers import accept, invitations_url, invite, members_url

MINE = "/api/v1/me/invitations"


def _decline(client: Any, invitation_id: str) -> Any:
    return client.post(f"{MINE}/{invitation_id}/decline")


def _listed(api: Api, admin: User, project: Project) -> dict[str, dict[str, Any]]:
    answer = api.client_for(admin).get(invitations_url(project))
    assert answer.status_code == 200, answer.content
    return {i["id"]: i for i in answer.json()["invitations"]}


def test_adding_a_member_invites_and_nobody_joins_until_they_accept(
        api: Api, acme: Project, alice: User, charlie: User) -> None:
    invited = invite(api.client_for(alice), acme, "charlie", "editor")
    assert {k: invited[k] for k in ("user", "role", "status", "invited_by")} == {
        "user": "charlie", "role": "editor", "status": "pending", "invited_by": "alice"}
    created, expires = (parse_datetime(invited[k]) for k in ("created_at", "expires_at"))
    assert created is not None and expires is not None
    assert abs(expires - created - timedelta(days=7)) < timedelta(seconds=5)
    assert not Membership.objects.filter(user=charlie).exists()
    person = api.client_for(charlie)
    api.assert_error(person.get(members_url(acme)), 404, "not_found")
    assert person.get("/api/v1/me").json()["projects"] == []
    mine = person.get(MINE).json()["invitations"]
    assert mine == [{"id": invited["id"], "role": "editor", "invited_by": "alice",
                     "project": {"id": acme.pk, "slug": "acme", "name": "Acme"},
                     "created_at": invited["created_at"],
                     "expires_at": invited["expires_at"]}]

    joined = accept(person, invited["id"])
    assert joined.status_code == 200, joined.content
    assert joined.json()["project"]["slug"] == "acme" and joined.json()["role"] == "editor"
    assert Membership.objects.get(user=charlie, project=acme).role == Role.EDITOR
    assert person.get(members_url(acme)).status_code == 200
    assert person.get(MINE).json()["invitations"] == []
    assert _listed(api, alice, acme)[invited["id"]]["status"] == "accepted"
    error = api.assert_error(accept(person, invited["id"]), 409, "invitation_not_pending")
    assert error["details"] == {"status": "accepted"}
    audit = list(AuditEvent.objects.filter(project=acme).order_by("id")
                 .values_list("action", "actor__username", "target_id"))
    assert audit == [("invitation.created", "alice", invited["id"]),
                     ("invitation.accepted", "charlie", invited["id"]),
                     ("member.added", "charlie", str(charlie.pk))]


def test_a_declined_invitation_makes_no_member(api: Api, acme: Project, alice: User,
                                               charlie: User) -> None:
    invited = invite(api.client_for(alice), acme, "charlie", "admin")
    person = api.client_for(charlie)
    assert _decline(person, invited["id"]).status_code == 204
    assert not Membership.objects.filter(user=charlie).exists()
    assert person.get(MINE).json()["invitations"] == []
    api.assert_error(accept(person, invited["id"]), 409, "invitation_not_pending")
    assert _listed(api, alice, acme)[invited["id"]]["status"] == "declined"
    assert AuditEvent.objects.get(action="invitation.declined").actor == charlie


def test_an_invitation_expires(api: Api, acme: Project, alice: User, charlie: User) -> None:
    invited = invite(api.client_for(alice), acme, "charlie", "viewer")
    Invitation.objects.filter(pk=invited["id"]).update(
        expires_at=timezone.now() - timedelta(seconds=1))
    person = api.client_for(charlie)
    assert person.get(MINE).json()["invitations"] == []
    error = api.assert_error(accept(person, invited["id"]), 409, "invitation_not_pending")
    assert error["details"] == {"status": "expired"}
    api.assert_error(_decline(person, invited["id"]), 409, "invitation_not_pending")
    assert not Membership.objects.filter(user=charlie).exists()
    assert _listed(api, alice, acme)[invited["id"]]["status"] == "expired"


def test_admins_revoke_invitations(api: Api, acme: Project, alice: User, bob: User,
                                   carol: User, charlie: User, mallory: User) -> None:
    invited = invite(api.client_for(alice), acme, "charlie", "viewer")
    url = f"{invitations_url(acme)}/{invited['id']}"
    api.assert_error(api.client_for(carol).delete(url), 403, "forbidden")
    api.assert_error(api.client_for(carol).get(invitations_url(acme)), 403, "forbidden")
    api.assert_error(api.client_for(mallory).delete(url), 404, "not_found")
    evil_url = f"/api/v1/projects/{mallory.kionga_memberships.get().project_id}/invitations"
    api.assert_error(api.client_for(mallory).delete(f"{evil_url}/{invited['id']}"), 404,
                     "not_found")
    admin = api.client_for(alice)
    assert admin.delete(url).status_code == 204
    assert admin.delete(url).status_code == 204  # again: the same outcome
    person = api.client_for(charlie)
    assert person.get(MINE).json()["invitations"] == []
    error = api.assert_error(accept(person, invited["id"]), 409, "invitation_not_pending")
    assert error["details"] == {"status": "revoked"}
    assert not Membership.objects.filter(user=charlie).exists()
    revoked = AuditEvent.objects.get(action="invitation.revoked")
    assert (revoked.actor, revoked.project, revoked.target_id) == (alice, acme, invited["id"])
    # An accepted invitation is not revoked: the admin removes the member instead.
    joined = invite(admin, acme, "charlie", "viewer")
    accept(person, joined["id"])
    api.assert_error(admin.delete(f"{invitations_url(acme)}/{joined['id']}"), 409,
                     "invitation_not_pending")
    api.assert_error(admin.delete(f"{invitations_url(acme)}/{uuid.uuid4()}"), 404,
                     "not_found")


def test_nobody_else_sees_or_answers_an_invitation(api: Api, acme: Project, evil: Project,
                                                   alice: User, bob: User, charlie: User,
                                                   mallory: User) -> None:
    invited = invite(api.client_for(alice), acme, "charlie", "admin")
    for person in (mallory, bob, alice):
        client = api.client_for(person)
        assert client.get(MINE).json()["invitations"] == []
        api.assert_error(accept(client, invited["id"]), 404, "not_found")
        api.assert_error(_decline(client, invited["id"]), 404, "not_found")
    thief = api.client_for(mallory)
    api.assert_error(thief.get(invitations_url(acme)), 404, "not_found")
    assert api.client_for(mallory).get(invitations_url(evil)).json()["invitations"] == []
    assert not Membership.objects.filter(user=mallory, project=acme).exists()
    api.assert_error(thief.post(f"{MINE}/not-an-id/accept"), 404, "not_found")
    # Still there for the person it names.
    assert accept(api.client_for(charlie), invited["id"]).status_code == 200


def test_inviting_again_refreshes_the_pending_invitation(api: Api, acme: Project,
                                                         alice: User, charlie: User) -> None:
    admin = api.client_for(alice)
    first = invite(admin, acme, "charlie", "viewer")
    Invitation.objects.filter(pk=first["id"]).update(
        expires_at=timezone.now() - timedelta(seconds=1))
    again = invite(admin, acme, "charlie", "editor")
    assert (again["id"], again["role"], again["status"]) == (first["id"], "editor", "pending")
    assert Invitation.objects.filter(project=acme).count() == 1
    accept(api.client_for(charlie), again["id"])
    assert Membership.objects.get(user=charlie, project=acme).role == Role.EDITOR


def test_a_members_username_is_already_a_member(api: Api, acme: Project, alice: User,
                                                bob: User) -> None:
    # The admin sees bob in the member list anyway: this tells them nothing new.
    answer = api.client_for(alice).post(members_url(acme), {"user": "bob", "role": "admin"},
                                        format="json")
    api.assert_error(answer, 409, "already_member")
    assert not Invitation.objects.exists()


def test_accepting_when_already_a_member_changes_nothing(api: Api, acme: Project,
                                                        alice: User, charlie: User) -> None:
    charlie.email = "charlie@example.com"
    charlie.save()
    invited = invite(api.client_for(alice), acme, "charlie@example.com", "admin")
    Membership.objects.create(project=acme, user=charlie, role=Role.VIEWER)  # ops added him
    person = api.client_for(charlie)
    api.assert_error(accept(person, invited["id"]), 409, "already_member")
    assert Membership.objects.get(user=charlie, project=acme).role == Role.VIEWER
    assert _decline(person, invited["id"]).status_code == 204


def test_staff_see_and_revoke_invitations_in_the_admin(api: Api, staff: Client, acme: Project,
                                                       alice: User, charlie: User) -> None:
    invited = invite(api.client_for(alice), acme, "charlie", "viewer")
    listing = staff.get("/admin/kionga/invitation/")
    assert listing.status_code == 200 and "charlie" in listing.content.decode()
    answer = staff.post("/admin/kionga/invitation/", {
        "action": "revoke", "_selected_action": [invited["id"]]})
    assert answer.status_code == 302
    assert Invitation.objects.get(pk=invited["id"]).status == Invitation.Status.REVOKED
    revoked = AuditEvent.objects.select_related("actor").get(action="invitation.revoked")
    assert revoked.actor is not None and revoked.actor.get_username() == "ops"
    # Ops staff still add members directly (docs/decisions/members-join-by-invitation.md).
    added = staff.post("/admin/kionga/membership/add/", {
        "project": acme.pk, "user": charlie.pk, "role": "viewer"})
    assert added.status_code == 302, added.content[:500]
    assert Membership.objects.filter(project=acme, user=charlie).exists()
