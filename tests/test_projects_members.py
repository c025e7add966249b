"""Project admins manage members through the API (people join by accepting an invitation:
tests/test_projects_invitations.py); everyone in the project reads the list. The last
admin stays; a removed member's tokens stop reaching the project at once."""

from __future__ import annotations

from django.contrib.auth.models import User

from kionga.models import AuditEvent, Membership, Project, Role
from tests.conftest import Api
from tests.projects_helpers import accept, invite, members_url


def test_every_member_reads_the_list(api: Api, acme: Project, alice: User, bob: User,
                                     carol: User) -> None:
    answer = api.client_for(bob).get(members_url(acme))
    assert answer.status_code == 200, answer.content
    assert answer.json()["members"] == [
        {"user_id": alice.pk, "username": "alice", "role": "admin"},
        {"user_id": bob.pk, "username": "bob", "role": "viewer"},
        {"user_id": carol.pk, "username": "carol", "role": "editor"},
    ]


def test_another_project_and_strangers_get_404(api: Api, acme: Project, alice: User,
                                               mallory: User, charlie: User) -> None:
    for person in (mallory, charlie):
        client = api.client_for(person)
        api.assert_error(client.get(members_url(acme)), 404, "not_found")
        api.assert_error(client.post(members_url(acme), {"user": "charlie", "role": "admin"},
                                     format="json"), 404, "not_found")
        api.assert_error(client.delete(f"{members_url(acme)}/{alice.pk}"), 404, "not_found")
    api.assert_error(api.anon().get(members_url(acme)), 401, "not_authenticated")


def test_viewers_and_editors_cannot_change_members(api: Api, acme: Project, alice: User,
                                                   bob: User, carol: User,
                                                   charlie: User) -> None:
    for person in (bob, carol):
        client = api.client_for(person)
        api.assert_error(client.post(members_url(acme), {"user": "charlie", "role": "viewer"},
                                     format="json"), 403, "forbidden")
        api.assert_error(client.patch(f"{members_url(acme)}/{bob.pk}", {"role": "admin"},
                                      format="json"), 403, "forbidden")
        api.assert_error(client.delete(f"{members_url(acme)}/{alice.pk}"), 403, "forbidden")
    assert Membership.objects.filter(project=acme).count() == 3


def test_an_admin_invites_changes_and_removes(api: Api, acme: Project, alice: User,
                                              charlie: User) -> None:
    charlie.email = "Charlie@Example.com"
    charlie.save()
    client = api.client_for(alice)
    invited = invite(client, acme, "charlie@example.com", "viewer")
    joined = accept(api.client_for(charlie), invited["id"])
    assert joined.status_code == 200, joined.content
    assert joined.json()["role"] == "viewer"
    again = client.post(members_url(acme), {"user": "charlie", "role": "editor"}, format="json")
    api.assert_error(again, 409, "already_member")
    changed = client.patch(f"{members_url(acme)}/{charlie.pk}", {"role": "editor"},
                           format="json")
    assert changed.json()["role"] == "editor"
    assert client.delete(f"{members_url(acme)}/{charlie.pk}").status_code == 204
    api.assert_error(client.delete(f"{members_url(acme)}/{charlie.pk}"), 404, "not_found")
    audit = list(AuditEvent.objects.filter(project=acme, target_type="user").order_by("id")
                 .values_list("action", "actor__username", "target_id", "details"))
    assert audit == [
        ("member.added", "charlie", str(charlie.pk),
         {"username": "charlie", "role": "viewer", "invited_by": "alice",
          "invitation_id": invited["id"]}),
        ("member.changed", "alice", str(charlie.pk),
         {"username": "charlie", "from": "viewer", "to": "editor"}),
        ("member.removed", "alice", str(charlie.pk), {"username": "charlie", "role": "editor"}),
    ]


def test_it_refuses_unknown_roles_and_a_missing_user(api: Api, acme: Project,
                                                    alice: User) -> None:
    client = api.client_for(alice)
    for body, field in [({"user": "alice", "role": "owner"}, "role"),
                        ({"role": "viewer"}, "user")]:
        error = api.assert_error(client.post(members_url(acme), body, format="json"),
                                 400, "invalid_request")
        assert list(error["details"]["fields"]) == [field]


def test_the_last_admin_stays(api: Api, acme: Project, alice: User, carol: User) -> None:
    client = api.client_for(alice)
    url = f"{members_url(acme)}/{alice.pk}"
    api.assert_error(client.patch(url, {"role": "editor"}, format="json"), 409, "last_admin")
    api.assert_error(client.delete(url), 409, "last_admin")
    client.patch(f"{members_url(acme)}/{carol.pk}", {"role": "admin"}, format="json")
    assert client.patch(url, {"role": "viewer"}, format="json").json()["role"] == "viewer"
    carol_client = api.client_for(carol)
    api.assert_error(carol_client.delete(f"{members_url(acme)}/{carol.pk}"), 409, "last_admin")
    assert Membership.objects.get(project=acme, user=carol).role == Role.ADMIN


def test_a_removed_member_loses_the_project_at_once(api: Api, acme: Project, evil: Project,
                                                    alice: User, carol: User) -> None:
    Membership.objects.create(project=evil, user=carol, role=Role.VIEWER)
    carol_client = api.client_for(carol)  # one token, used before and after
    assert carol_client.get(members_url(acme)).status_code == 200
    api.client_for(alice).delete(f"{members_url(acme)}/{carol.pk}")
    api.assert_error(carol_client.get(members_url(acme)), 404, "not_found")
    api.assert_error(carol_client.get(f"/api/v1/projects/{acme.pk}/resources"), 404,
                     "not_found")
    assert carol_client.get(members_url(evil)).status_code == 200  # elsewhere unchanged
    assert [p["slug"] for p in carol_client.get("/api/v1/me").json()["projects"]] == ["evil"]
