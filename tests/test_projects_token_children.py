"""A token that makes tokens (POST /api/v1/me/tokens with a bearer token) makes its
children: they expire no later than it does, record it as their parent, and every
revocation of it (everywhere, or for one project) covers them. A token manages only
itself and the tokens made from it, and never clears or extends an expiry; a
signed-in person (session) manages all of their tokens."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from kionga.models import ApiToken, Project, TokenRevocation
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.projects_helpers import MY_TOKENS, bearer, made_token, members_url, signed_in


def later(**delta: float) -> datetime:
    return timezone.now() + timedelta(**delta)


def test_a_token_revoked_for_the_project_cannot_mint_a_working_one(
        api: Api, acme: Project, alice: User, carol: User) -> None:
    design = make_design(alice, acme)
    leaked = made_token(signed_in(carol), "leaked")
    before = made_token(bearer(leaked["token"]), "made before the revocation")
    assert bearer(leaked["token"]).get(members_url(acme)).status_code == 200  # used in acme
    tokens_url = f"/api/v1/projects/{acme.pk}/tokens"
    assert api.client_for(alice).delete(f"{tokens_url}/{leaked['id']}").status_code == 204
    after = made_token(bearer(leaked["token"]), "made after the revocation")
    for child in (before, after):
        client = bearer(child["token"])
        api.assert_error(client.get(members_url(acme)), 404, "not_found")
        api.assert_error(client.get(f"/api/v1/agent-designs/{design.pk}"), 404, "not_found")
        api.assert_error(client.post(f"/api/v1/agent-designs/{design.pk}/runs",
                                     {"input": "hi"}, format="json"), 404, "not_found")
    assert not Run.objects.exists()
    assert after["parent_id"] == leaked["id"] and before["parent_id"] == leaked["id"]
    listed = {t["id"]: t for t in api.client_for(alice).get(tokens_url).json()["tokens"]}
    assert listed[before["id"]]["revoked_in_project"] and listed[after["id"]][
        "revoked_in_project"]
    # carol's own other tokens keep their access.
    assert api.client_for(carol).get(members_url(acme)).status_code == 200


def test_a_token_cannot_end_or_change_its_owners_other_tokens(
        api: Api, acme: Project, carol: User) -> None:
    person = signed_in(carol)
    other = made_token(person, "laptop")
    thief = bearer(made_token(person, "leaked")["token"])
    url = f"{MY_TOKENS}/{other['id']}"
    api.assert_error(thief.delete(url), 403, "forbidden")
    api.assert_error(thief.patch(url, {"name": "mine now"}, format="json"), 403, "forbidden")
    api.assert_error(thief.patch(url, {"expires_at": later(seconds=5).isoformat()},
                                 format="json"), 403, "forbidden")
    stored = ApiToken.objects.get(pk=other["id"])
    assert (stored.revoked, stored.name, stored.expires_at) == (False, "laptop", None)
    assert bearer(other["token"]).get(members_url(acme)).status_code == 200


def test_a_token_manages_itself_and_the_tokens_made_from_it(api: Api, carol: User) -> None:
    own = made_token(signed_in(carol), "ci")
    client = bearer(own["token"])
    child = made_token(client, "child")
    grandchild = made_token(bearer(child["token"]), "grandchild")
    renamed = client.patch(f"{MY_TOKENS}/{grandchild['id']}", {"name": "job"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["name"] == "job"
    assert client.delete(f"{MY_TOKENS}/{child['id']}").status_code == 204
    api.assert_error(bearer(grandchild["token"]).get("/api/v1/me"), 401, "invalid_token")
    assert client.get("/api/v1/me").status_code == 200
    # A child may not touch its parent.
    sibling = made_token(client, "sibling")
    api.assert_error(bearer(sibling["token"]).delete(f"{MY_TOKENS}/{own['id']}"), 403, "forbidden")
    assert client.delete(f"{MY_TOKENS}/{own['id']}").status_code == 204
    api.assert_error(bearer(sibling["token"]).get("/api/v1/me"), 401, "invalid_token")


def test_a_token_cannot_clear_or_extend_an_expiry(api: Api, carol: User) -> None:
    own = made_token(signed_in(carol), "ci", expires_at=later(days=1).isoformat())
    client = bearer(own["token"])
    child = made_token(client, "child")
    for target in (own, child):
        url = f"{MY_TOKENS}/{target['id']}"
        for wanted in (None, later(days=2).isoformat()):
            api.assert_error(client.patch(url, {"expires_at": wanted}, format="json"), 403,
                             "forbidden")
    sooner = later(hours=1)
    narrowed = client.patch(f"{MY_TOKENS}/{own['id']}", {"expires_at": sooner.isoformat()},
                            format="json")
    assert narrowed.status_code == 200, narrowed.content
    for target in (own, child):  # the child never outlives its parent
        assert ApiToken.objects.get(pk=target["id"]).expires_at == sooner


def test_a_child_expires_no_later_than_its_parent(api: Api, carol: User) -> None:
    ends = later(days=1)
    own = made_token(signed_in(carol), "ci", expires_at=ends.isoformat())
    client = bearer(own["token"])
    for body in ({}, {"expires_at": None}):
        child = made_token(client, "as long as it may", **body)
        assert (child["expires_at"], child["parent_id"]) == (ends.isoformat(), own["id"])
    sooner = later(hours=2)
    assert made_token(client, "shorter", expires_at=sooner.isoformat())["expires_at"] == (
        sooner.isoformat())
    api.assert_error(client.post(MY_TOKENS, {"name": "longer",
                                        "expires_at": later(days=3).isoformat()},
                                 format="json"), 403, "forbidden")
    assert ApiToken.objects.filter(user=carol).count() == 4
    # A token without an expiry may make children without one.
    unbounded = made_token(signed_in(carol), "forever")
    assert made_token(bearer(unbounded["token"]), "child")["expires_at"] is None


def test_a_tokens_revocation_covers_every_token_made_from_it(
        api: Api, acme: Project, evil: Project, alice: User, carol: User) -> None:
    person = signed_in(carol)
    root = made_token(person, "root")
    child = made_token(bearer(root["token"]), "child")
    grandchild = made_token(bearer(child["token"]), "grandchild")
    unrelated = made_token(person, "unrelated")
    assert bearer(child["token"]).get(members_url(acme)).status_code == 200  # used in acme
    assert api.client_for(alice).delete(
        f"/api/v1/projects/{acme.pk}/tokens/{child['id']}").status_code == 204
    revoked_here = set(TokenRevocation.objects.filter(project=acme)
                       .values_list("token_id", flat=True))
    assert revoked_here == {child["id"], grandchild["id"]}
    assert person.delete(f"{MY_TOKENS}/{root['id']}").status_code == 204
    for dead in (root, child, grandchild):
        api.assert_error(bearer(dead["token"]).get("/api/v1/me"), 401, "invalid_token")
    assert bearer(unrelated["token"]).get(members_url(acme)).status_code == 200


def test_a_signed_in_person_manages_all_their_tokens(api: Api, carol: User) -> None:
    person = signed_in(carol)
    root = made_token(person, "root", expires_at=later(days=1).isoformat())
    assert root["parent_id"] is None
    child = made_token(bearer(root["token"]), "child")
    for target in (root, child):
        url = f"{MY_TOKENS}/{target['id']}"
        extended = person.patch(url, {"expires_at": later(days=30).isoformat()}, format="json")
        assert extended.status_code == 200, extended.content
        cleared = person.patch(url, {"expires_at": None, "name": "renamed"}, format="json")
        assert cleared.status_code == 200 and cleared.json()["expires_at"] is None
    assert person.delete(f"{MY_TOKENS}/{child['id']}").status_code == 204
    assert bearer(root["token"]).get("/api/v1/me").status_code == 200
    assert person.delete(f"{MY_TOKENS}/{root['id']}").status_code == 204
    assert ApiToken.objects.filter(user=carol, revoked=False).count() == 0


def test_the_admin_sites_revocation_covers_the_children(api: Api, staff: Client,
                                                        carol: User) -> None:
    root = made_token(signed_in(carol), "root")
    child = made_token(bearer(root["token"]), "child")
    page = f"/admin/kionga/apitoken/{root['id']}/change/"
    answer = staff.post(page, {"expires_at_0": "", "expires_at_1": "", "revoked": "on"})
    assert answer.status_code == 302, answer.content
    api.assert_error(bearer(child["token"]).get("/api/v1/me"), 401, "invalid_token")
