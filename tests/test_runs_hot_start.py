"""Starting a run on the hot route (runs.hot.start): the checks of the DRF path in its
order — a live token, the API throttles, the editor role in a project that did not
revoke the token — then runs.start's own start_target (rows, audit, the task)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import redis
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.exceptions import APIException

from kionga import throttles
from kionga.models import ApiToken, AuditEvent, Project, TokenRevocation
from kionga.tokens import create_token
from runs.hot.start import start_with_token
from runs.models import Run, RunCredential
from runs.start import StartRequest
from runs.stream_limits import BUDGET
from tests.designs_helpers import make_design
from tests.runs_helpers import queued_tasks

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("runner_configured")]

HELLO = StartRequest("hello", None, None, False, None, None)


def _refused(call: Any) -> tuple[int, str]:
    with pytest.raises(APIException) as caught:
        call()
    return caught.value.status_code, str(caught.value.get_codes())


def test_an_editor_starts_a_run_with_its_rows_audit_and_task(
        alice: User, acme: Project, rds: redis.Redis,
        django_capture_on_commit_callbacks: Any) -> None:
    design = make_design(alice, acme)
    _token, raw = create_token(alice, "cli")
    with django_capture_on_commit_callbacks(execute=True):
        run, release = start_with_token(raw, design.pk, HELLO, False)
    assert release is None
    stored = Run.objects.get(pk=run.pk)
    assert (stored.created_by_id, stored.design_id, stored.status) == (alice.pk, design.pk,
                                                                       "queued")
    assert RunCredential.objects.filter(run=stored).exists()
    assert AuditEvent.objects.filter(action="run.started", target_id=str(run.pk),
                                     actor=alice).exists()
    [(payload, _signature)] = queued_tasks(rds)
    assert (payload["run_id"], payload["input"]) == (str(run.pk), "hello")


def test_the_callers_tenancy_and_role_are_checked(alice: User, bob: User, mallory: User,
                                                  acme: Project, rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    viewer, outsider = create_token(bob, "b")[1], create_token(mallory, "m")[1]
    assert _refused(lambda: start_with_token(viewer, design.pk, HELLO, False))[0] == 403
    assert _refused(lambda: start_with_token(outsider, design.pk, HELLO, False))[0] == 404
    token, raw = create_token(alice, "revoked here")
    TokenRevocation.objects.create(token=token, project=acme)
    assert _refused(lambda: start_with_token(raw, design.pk, HELLO, False))[0] == 404
    assert not Run.objects.exists() and not queued_tasks(rds)


def test_dead_tokens_are_401(alice: User, acme: Project) -> None:
    design = make_design(alice, acme)
    expired, raw_expired = create_token(alice, "old", timezone.now() - timedelta(minutes=1))
    revoked, raw_revoked = create_token(alice, "revoked")
    ApiToken.objects.filter(pk=revoked.pk).update(revoked=True)
    _inactive, raw_inactive = create_token(alice, "gone")
    for raw in (raw_expired, raw_revoked, "kio_" + "x" * 43, "nope"):
        assert _refused(lambda raw=raw: start_with_token(raw, design.pk, HELLO, False))[0] == 401
    User.objects.filter(pk=alice.pk).update(is_active=False)
    assert _refused(lambda: start_with_token(raw_inactive, design.pk, HELLO, False))[0] == 401


def test_the_api_throttle_applies(alice: User, acme: Project, settings: Any,
                                  rds: redis.Redis) -> None:
    settings.KIONGA_THROTTLE_USER = "2/minute"
    design = make_design(alice, acme)
    raw = create_token(alice, "cli")[1]
    rds.delete(f"{throttles.KEY_PREFIX}user:{alice.pk}")
    for _ in range(2):
        start_with_token(raw, design.pk, HELLO, False)
    with pytest.raises(APIException) as caught:
        start_with_token(raw, design.pk, HELLO, False)
    assert (caught.value.status_code, caught.value.default_code) == (429, "throttled")
    assert getattr(caught.value, "wait", 0) > 0  # answered with Retry-After
    assert Run.objects.count() == 2
    rds.delete(f"{throttles.KEY_PREFIX}user:{alice.pk}")


def test_a_refused_start_gives_its_stream_place_back(alice: User, acme: Project,
                                                     settings: Any, rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    raw = create_token(alice, "cli")[1]
    settings.KIONGA_MAX_STREAMS_PER_USER = 1
    wrong = StartRequest("hi", None, None, False, "no-such-node", None)
    assert _refused(lambda: start_with_token(raw, design.pk, wrong, True))[0] == 400
    run, release = start_with_token(raw, design.pk, HELLO, True)  # the place is free
    assert release is not None
    assert _refused(lambda: start_with_token(raw, design.pk, HELLO, True))[0] == 429
    release()
    assert BUDGET.open(alice.pk) is not None
