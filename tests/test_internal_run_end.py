"""A run credential dies with its run at once: when the runner frees the run's slot
(its last event is written; the ingester stores the end later), when the slot's lease
runs out (runner gone), and when a cancel is requested."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.redis_client import sync_redis
from runner import protocol
from runs.cancel import do_cancel_run
from runs.models import Run, RunCredential
from tests.conftest import Api
from tests.internal_helpers import BASE, closed_port_url, run_client, start_run

pytestmark = pytest.mark.urls("kionga.internal_urls")

KBS = BASE + "knowledge-bases"


def test_it_refuses_the_credential_once_the_runner_freed_the_slot(
    api: Api, carol: User, acme: Project
) -> None:
    run, raw = start_run(carol, acme)
    assert run_client(raw).get(KBS).status_code == 200
    protocol.release_slot(sync_redis(), str(run.pk))  # what the runner does at the end
    api.assert_error(run_client(raw).get(KBS), 401, "invalid_credential")
    assert Run.objects.get(pk=run.pk).status == "running"  # not stored yet: no matter


def test_it_refuses_the_credential_of_a_run_whose_lease_ran_out(
    api: Api, carol: User, acme: Project
) -> None:
    run, raw = start_run(carol, acme)
    lease: Any = sync_redis().hget(protocol.LEASES_KEY, str(run.pk))
    sync_redis().delete(protocol.lease_key(lease.decode()))  # expired
    api.assert_error(run_client(raw).get(KBS), 401, "invalid_credential")


def test_it_refuses_the_credential_as_soon_as_a_cancel_is_requested(
    api: Api, carol: User, acme: Project
) -> None:
    run, raw = start_run(carol, acme)
    sync_redis().set(protocol.claim_key(str(run.pk)), "runner", ex=60)  # a runner has it
    do_cancel_run(carol, run)
    error = api.assert_error(run_client(raw).get(KBS), 401, "run_cancelled")
    assert "cancelled" in error["message"]
    assert RunCredential.objects.get(run=run).revoked_at is not None
    assert Run.objects.get(pk=run.pk).status == "running"  # the runner ends it


@pytest.mark.allow_output  # redis-py may log the refused connection
def test_it_answers_503_when_the_runs_state_cannot_be_read(
    api: Api, carol: User, acme: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, raw = start_run(carol, acme)
    down = redis.Redis.from_url(closed_port_url().replace("http", "redis") + "/0")
    monkeypatch.setattr("runs.run_auth.sync_redis", lambda: down)
    api.assert_error(run_client(raw).get(KBS), 503, "resource_unavailable")
