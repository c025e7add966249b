"""Opening an event stream with a token: the API's authentication (a live token, 401
otherwise), then one query (runs.stream_open) for a run of that design in a project
the token may reach (404 otherwise) and the stored events after Last-Event-ID."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.exceptions import APIException

from kionga.errors import describe
from kionga.models import ApiToken, Project, TokenRevocation
from kionga.tokens import create_token
from runs.models import Run, RunEvent
from tests.designs_helpers import make_design
from tests.runs_helpers import open_with_token

pytestmark = pytest.mark.django_db


def _run(alice: User, acme: Project, status: str = "running") -> Run:
    design = make_design(alice, acme)
    run = Run.objects.create(project=acme, design=design, revision=1, content_sha256="x" * 64,
                             created_by=alice, status=status)
    for seq, kind in enumerate(["run.started", "node.started", "node.completed"]):
        RunEvent.objects.create(run=run, seq=seq, type=kind, data={"seq": seq, "type": kind})
    return run


def _design(run: Run) -> uuid.UUID:
    assert run.design_id is not None
    return run.design_id


def _code(call: Any) -> tuple[int, str]:
    with pytest.raises(APIException) as caught:
        call()
    return caught.value.status_code, describe(caught.value)[0]


def test_a_member_opens_with_the_stored_events_after_the_last_one(
        alice: User, bob: User, acme: Project) -> None:
    run = _run(alice, acme)
    token, raw = create_token(bob, "viewer's")  # a viewer may read
    user_id, run_id, (final, stored) = open_with_token(raw, _design(run), run.pk, 0)
    assert (user_id, run_id, final) == (bob.pk, str(run.pk), False)
    assert [e["seq"] for e in stored] == [1, 2]
    token.refresh_from_db()
    assert token.last_used_at is not None  # its use is recorded, as on every route
    Run.objects.filter(pk=run.pk).update(status="completed")
    assert open_with_token(raw, _design(run), run.pk, 2)[2] == (True, [])


def test_a_dead_token_is_401(alice: User, acme: Project) -> None:
    run = _run(alice, acme)
    open_ = lambda raw: lambda: open_with_token(raw, _design(run), run.pk, -1)  # noqa: E731
    assert _code(open_("kio_unknown-token-0123456789")) == (401, "invalid_token")
    assert _code(open_("not-a-kionga-token")) == (401, "invalid_token")
    revoked, raw_revoked = create_token(alice, "revoked")
    ApiToken.objects.filter(pk=revoked.pk).update(revoked=True)
    assert _code(open_(raw_revoked)) == (401, "invalid_token")
    expired, raw_expired = create_token(alice, "expired")
    # Well past: the query's now() is the test transaction's start, maybe seconds ago.
    ApiToken.objects.filter(pk=expired.pk).update(
        expires_at=timezone.now() - timedelta(hours=1))
    assert _code(open_(raw_expired)) == (401, "invalid_token")
    _, raw_inactive = create_token(alice, "inactive")
    User.objects.filter(pk=alice.pk).update(is_active=False)
    assert _code(open_(raw_inactive)) == (401, "invalid_token")


def test_a_run_the_token_may_not_reach_is_404(alice: User, bob: User, mallory: User,
                                               charlie: User, acme: Project) -> None:
    run = _run(alice, acme)
    for user in (mallory, charlie):  # another tenant's admin; a user of no project
        stranger = create_token(user, "x")[1]
        assert _code(lambda t=stranger: open_with_token(t, _design(run), run.pk, -1)) == (
            404, "not_found")
    raw = create_token(alice, "owner's")[1]
    assert _code(lambda: open_with_token(raw, uuid.uuid4(), run.pk, -1)) == (404, "not_found")
    assert _code(lambda: open_with_token(raw, _design(run), uuid.uuid4(), -1)) == (
        404, "not_found")
    # A token an admin revoked for the project: 404 there; the owner's other tokens read.
    leaked, raw_leaked = create_token(bob, "leaked")
    TokenRevocation.objects.create(token=leaked, project=acme, revoked_by=alice)
    assert _code(lambda: open_with_token(raw_leaked, _design(run), run.pk, -1)) == (
        404, "not_found")
    assert open_with_token(create_token(bob, "other")[1], _design(run), run.pk, -1)[0] == bob.pk
