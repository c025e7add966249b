"""A project's admins list only the tokens used in their project (kionga.token_use) or
revoked for it, with the last use there: never a member's token used only elsewhere,
its use there, or another project's name. A use is recorded by every membership check
(kionga.access, the SSE lookup) and written at most once a minute per token and
project."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any, cast

from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from kionga import token_use
from kionga.models import ApiToken, Membership, Project, Role, TokenUse
from kionga.tokens import signed_in_user
from runs.models import Run
from runs.stream_open import open_run
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.projects_helpers import bearer, made_token, members_url, signed_in

LONG_AGO = datetime(2020, 1, 2, 3, 4, 5, tzinfo=timezone.get_current_timezone())


def _listing(api: Api, admin: User, project: Project) -> tuple[dict[int, dict[str, Any]], str]:
    answer = api.client_for(admin).get(f"/api/v1/projects/{project.pk}/tokens")
    assert answer.status_code == 200, answer.content
    return {t["id"]: t for t in answer.json()["tokens"]}, answer.content.decode()


def test_a_project_lists_only_the_tokens_used_in_it(api: Api, acme: Project, evil: Project,
                                                     alice: User, bob: User) -> None:
    Membership.objects.create(project=evil, user=bob, role=Role.ADMIN)
    person = signed_in(bob)
    here = made_token(person, "laptop")
    elsewhere = made_token(person, "evil-corp-deploy")
    unused = made_token(person, "spare")
    assert bearer(here["token"]).get(members_url(acme)).status_code == 200
    assert bearer(elsewhere["token"]).get(members_url(evil)).status_code == 200
    # The use in acme, long ago; since then only uses elsewhere.
    TokenUse.objects.filter(token_id=here["id"]).update(last_used_at=LONG_AGO)
    ApiToken.objects.filter(pk=here["id"]).update(last_used_at=None)
    assert bearer(here["token"]).get(members_url(evil)).status_code == 200

    listed, text = _listing(api, alice, acme)
    bobs = {i: t for i, t in listed.items() if t["owner"] == "bob"}
    assert list(bobs) == [here["id"]]
    assert bobs[here["id"]]["last_used_at"] == LONG_AGO.isoformat()
    assert "evil" not in text.lower() and elsewhere["id"] not in listed
    assert unused["id"] not in listed
    admin = api.client_for(alice)
    for other in (elsewhere, unused):
        api.assert_error(admin.delete(f"/api/v1/projects/{acme.pk}/tokens/{other['id']}"), 404,
                         "not_found")
    # evil's admin (bob) sees the tokens used there, and the use there.
    evil_listed, _ = _listing(api, bob, evil)
    assert {elsewhere["id"], here["id"]} <= set(evil_listed)
    assert evil_listed[here["id"]]["last_used_at"] != LONG_AGO.isoformat()


def test_a_token_revoked_for_the_project_stays_listed(api: Api, acme: Project, alice: User,
                                                      bob: User) -> None:
    leaked = made_token(signed_in(bob), "leaked")
    child = made_token(bearer(leaked["token"]), "child")  # never used in acme itself
    bearer(leaked["token"]).get(members_url(acme))
    url = f"/api/v1/projects/{acme.pk}/tokens"
    assert api.client_for(alice).delete(f"{url}/{leaked['id']}").status_code == 204
    listed, _ = _listing(api, alice, acme)
    assert listed[leaked["id"]]["revoked_in_project"] is True
    assert listed[child["id"]]["revoked_in_project"] is True
    assert listed[child["id"]]["last_used_at"] is None


def test_every_membership_check_records_the_use(api: Api, acme: Project, alice: User,
                                                carol: User) -> None:
    design = make_design(alice, acme)
    run = Run.objects.create(project=acme, design=design, revision=1, content_sha256="x" * 64,
                             created_by=alice, status="completed")
    person = signed_in(carol)
    assert person.get(members_url(acme)).status_code == 200  # a session: no token, no row
    assert not TokenUse.objects.exists()
    by_design = made_token(person, "design reader")
    assert bearer(by_design["token"]).get(
        f"/api/v1/agent-designs/{design.pk}").status_code == 200  # kionga.access rows
    by_stream = made_token(person, "stream reader")
    token = ApiToken.objects.get(pk=by_stream["id"])
    assert open_run(signed_in_user(token), design.pk, run.pk, None)[0] == str(run.pk)
    assert set(TokenUse.objects.filter(project=acme).values_list("token_id", flat=True)) == {
        by_design["id"], by_stream["id"]}


def test_a_use_is_written_at_most_once_a_minute(
        acme: Project, carol: User, django_capture_on_commit_callbacks: Any) -> None:
    token = ApiToken.objects.create(user=carol, name="t", prefix="kio_abcd", token_hash="h")
    with django_capture_on_commit_callbacks(execute=True):
        token_use.record(token.pk, acme.pk)
    first = TokenUse.objects.get(token=token).last_used_at
    with CaptureQueriesContext(connection) as queries:  # this process wrote it just now
        token_use.record(token.pk, acme.pk)
    assert len(queries) == 0
    token_use._written.clear()  # another process: the row itself is still fresh
    token_use.record(token.pk, acme.pk)
    assert TokenUse.objects.get(token=token).last_used_at == first
    TokenUse.objects.filter(token=token).update(last_used_at=first - timedelta(seconds=61))
    token_use._written.clear()
    token_use.record(token.pk, acme.pk)
    assert cast(datetime, TokenUse.objects.get(token=token).last_used_at) > first
