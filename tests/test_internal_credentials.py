"""runs.credentials: issue, store only a hash, revoke, find the active run."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from kionga.models import Project
from kionga.tokens import hash_token
from runs.credentials import (
    CREDENTIAL_MAX_AGE,
    find_active_run,
    issue_credential,
    revoke_credential,
)
from runs.models import Run, RunCredential
from tests.internal_helpers import start_run


def test_it_issues_a_random_prefixed_credential(carol: User, acme: Project) -> None:
    run, raw = start_run(carol, acme)
    _, other = start_run(carol, acme)
    assert raw.startswith("krc_") and len(raw) >= 40 and raw != other


def test_it_stores_only_the_sha256_of_the_credential(carol: User, acme: Project) -> None:
    run, raw = start_run(carol, acme)
    stored = RunCredential.objects.get(run=run)
    assert stored.token_hash == hash_token(raw) and len(stored.token_hash) == 64
    assert raw not in stored.token_hash


def test_it_finds_the_run_of_a_live_credential(carol: User, acme: Project) -> None:
    run, raw = start_run(carol, acme)
    found = find_active_run(raw)
    assert found is not None and found.pk == run.pk


def test_it_finds_queued_and_waiting_runs(carol: User, acme: Project) -> None:
    for status in ("queued", "waiting"):
        run, raw = start_run(carol, acme, status=status)
        assert find_active_run(raw) == run


def test_it_finds_nothing_for_unknown_or_foreign_values(carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    assert find_active_run(raw + "x") is None
    assert find_active_run("kio_" + raw[4:]) is None
    assert find_active_run("") is None


def test_it_finds_nothing_once_revoked(carol: User, acme: Project) -> None:
    run, raw = start_run(carol, acme)
    revoke_credential(run)
    revoke_credential(run)  # idempotent
    assert RunCredential.objects.get(run=run).revoked_at is not None
    assert find_active_run(raw) is None


def test_it_finds_nothing_when_the_run_finished(carol: User, acme: Project) -> None:
    for status in ("completed", "failed", "cancelled"):
        run, raw = start_run(carol, acme)
        Run.objects.filter(pk=run.pk).update(status=status)
        assert find_active_run(raw) is None


def test_it_finds_nothing_for_an_expired_credential(carol: User, acme: Project) -> None:
    run, raw = start_run(carol, acme)
    old = timezone.now() - CREDENTIAL_MAX_AGE - timedelta(seconds=1)
    RunCredential.objects.filter(run=run).update(created_at=old)
    assert find_active_run(raw) is None


def test_it_replaces_the_credential_when_issued_again(carol: User, acme: Project) -> None:
    run, first = start_run(carol, acme)
    revoke_credential(run)
    second = issue_credential(run)
    assert find_active_run(first) is None
    assert find_active_run(second) == run
