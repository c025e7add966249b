"""A person's own tokens (/api/v1/me/tokens): shown once, named, expiring, revoked.
A project admin takes one token's access to their project away, and only that."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from kionga.errors import APIError
from kionga.models import ApiToken, AuditEvent, Membership, Project, Role
from kionga.tokens import signed_in_user
from runs.models import Run
from runs.stream_open import open_run
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.projects_helpers import bearer, members_url

MINE = "/api/v1/me/tokens"


def test_a_token_is_shown_once_and_listed_by_prefix(api: Api, bob: User) -> None:
    client = api.client_for(bob)
    created = client.post(MINE, {"name": "laptop"}, format="json")
    assert created.status_code == 201, created.content
    raw = created.json()["token"]
    assert raw.startswith("kio_") and created.json()["prefix"] == raw[:8]
    assert bearer(raw).get("/api/v1/me").json()["username"] == "bob"
    listed = client.get(MINE)
    assert raw not in listed.content.decode()
    mine = [t for t in listed.json()["tokens"] if t["name"] == "laptop"]
    assert mine == [{**{k: v for k, v in created.json().items() if k != "token"},
                     "last_used_at": mine[0]["last_used_at"]}]
    assert mine[0]["last_used_at"] is not None
    assert set(mine[0]) == {"id", "name", "prefix", "created_at", "last_used_at",
                            "expires_at", "revoked", "parent_id"}
    entry = AuditEvent.objects.get(action="token.created", target_id=str(mine[0]["id"]))
    assert entry.actor == bob and raw not in str(entry.details)


def test_it_renames_expires_and_revokes(api: Api, bob: User) -> None:
    client = api.client_for(bob)
    made = client.post(MINE, {"name": "ci"}, format="json").json()
    url = f"{MINE}/{made['id']}"
    later = (timezone.now() + timedelta(days=30)).isoformat()
    changed = client.patch(url, {"name": "ci-2", "expires_at": later}, format="json")
    assert changed.status_code == 200 and changed.json()["name"] == "ci-2"
    assert changed.json()["expires_at"] is not None
    past = (timezone.now() - timedelta(seconds=1)).isoformat()
    api.assert_error(client.patch(url, {"expires_at": past}, format="json"), 400,
                     "invalid_request")
    ApiToken.objects.filter(pk=made["id"]).update(expires_at=timezone.now() - timedelta(1))
    api.assert_error(bearer(made["token"]).get("/api/v1/me"), 401, "invalid_token")
    assert client.delete(url).status_code == 204
    assert ApiToken.objects.get(pk=made["id"]).revoked
    assert AuditEvent.objects.filter(action="token.revoked", actor=bob).count() == 1


def test_a_revoked_token_stops_at_once(api: Api, bob: User) -> None:
    made = api.client_for(bob).post(MINE, {"name": "x"}, format="json").json()
    own = bearer(made["token"])
    assert own.delete(f"{MINE}/{made['id']}").status_code == 204
    api.assert_error(own.get("/api/v1/me"), 401, "invalid_token")


def test_nobody_touches_anothers_token(api: Api, bob: User, mallory: User) -> None:
    made = api.client_for(bob).post(MINE, {"name": "x"}, format="json").json()
    thief = api.client_for(mallory)
    api.assert_error(thief.delete(f"{MINE}/{made['id']}"), 404, "not_found")
    api.assert_error(thief.patch(f"{MINE}/{made['id']}", {"name": "y"}, format="json"), 404,
                     "not_found")
    assert made["id"] not in [t["id"] for t in thief.get(MINE).json()["tokens"]]
    api.assert_error(thief.delete(f"/api/v1/projects/{bob.kionga_memberships.get().project_id}"
                                  f"/tokens/{made['id']}"), 404, "not_found")


def test_an_admin_revokes_a_tokens_access_to_the_project_only(
        api: Api, acme: Project, evil: Project, alice: User, bob: User, carol: User) -> None:
    Membership.objects.create(project=evil, user=bob, role=Role.VIEWER)
    made = api.client_for(bob).post(MINE, {"name": "leaked"}, format="json").json()
    assert bearer(made["token"]).get(members_url(acme)).status_code == 200  # used in acme
    other = api.client_for(bob)  # another token of bob's: untouched
    url = f"/api/v1/projects/{acme.pk}/tokens"
    api.assert_error(api.client_for(carol).get(url), 403, "forbidden")
    api.assert_error(api.client_for(carol).delete(f"{url}/{made['id']}"), 403, "forbidden")
    admin = api.client_for(alice)
    listed = admin.get(url).json()["tokens"]
    assert made["token"] not in str(listed)
    assert {"owner": "bob", "revoked_in_project": False}.items() <= next(
        t for t in listed if t["id"] == made["id"]).items()
    assert admin.delete(f"{url}/{made['id']}").status_code == 204
    leaked = bearer(made["token"])
    api.assert_error(leaked.get(members_url(acme)), 404, "not_found")
    api.assert_error(leaked.get(f"/api/v1/agent-versions?project_id={acme.pk}"), 404,
                     "not_found")
    design = make_design(alice, acme)
    run = Run.objects.create(project=acme, design=design, revision=1, content_sha256="x" * 64,
                             created_by=alice, status="completed")
    # The event stream's own read (runs.stream_open.open_run) honours it too; called
    # directly, as the stream hands its connection back (no transaction in this test).
    with pytest.raises(APIError):
        open_run(signed_in_user(ApiToken.objects.get(pk=made["id"])), design.pk, run.pk, None)
    assert open_run(signed_in_user(ApiToken.objects.filter(user=bob).exclude(  # type: ignore[arg-type]
        pk=made["id"]).first()), design.pk, run.pk, None)[0] == str(run.pk)
    api.assert_error(leaked.get(f"/api/v1/agent-designs/{design.pk}"), 404, "not_found")
    assert other.get(f"/api/v1/agent-designs/{design.pk}").status_code == 200
    assert [p["slug"] for p in leaked.get("/api/v1/me").json()["projects"]] == ["evil"]
    assert leaked.get(members_url(evil)).status_code == 200
    assert other.get(members_url(acme)).status_code == 200
    assert next(t for t in admin.get(url).json()["tokens"]
                if t["id"] == made["id"])["revoked_in_project"] is True
    entry = AuditEvent.objects.get(action="token.revoked_for_project")
    assert (entry.project, entry.actor, entry.target_id) == (acme, alice, str(made["id"]))
