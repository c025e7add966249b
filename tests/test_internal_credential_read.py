"""runs.credentials.find_credential: the one prepared read of a resource call (the
credential, its run, the run's starter and the starter's role) says what the ORM's
reads say, in every case the internal listener tells apart."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga import prepared_sql
from kionga.models import Membership, Project, Role
from runs.credentials import find_credential, revoke_credential
from tests.internal_helpers import start_run

pytestmark = pytest.mark.django_db


def _both(raw: str, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    """(prepared read, ORM read) of raw, as comparable tuples (None when not found)."""
    def seen() -> Any:
        found = find_credential(raw)
        if found is None:
            return None
        run = found.run
        return (run.pk, run.status, run.project_id, run.resources, found.revoked, found.live,
                found.starter_role, run.created_by and run.created_by.username,
                run.created_by and run.created_by.is_active)
    prepared = seen()
    monkeypatch.setattr(prepared_sql, "available", lambda: False)
    orm = seen()
    monkeypatch.undo()
    return prepared, orm


def _editor_removed(carol: User, acme: Project) -> None:
    Membership.objects.filter(user=carol, project=acme).delete()


def _made_viewer(carol: User, acme: Project) -> None:
    Membership.objects.filter(user=carol, project=acme).update(role=Role.VIEWER)


def _deactivated(carol: User, acme: Project) -> None:
    User.objects.filter(pk=carol.pk).update(is_active=False)


def _deleted(carol: User, acme: Project) -> None:
    User.objects.filter(pk=carol.pk).delete()


@pytest.mark.parametrize("change", [None, _editor_removed, _made_viewer, _deactivated,
                                    _deleted])
def test_it_reads_what_the_orm_reads(carol: User, acme: Project,
                                     monkeypatch: pytest.MonkeyPatch,
                                     change: Callable[[User, Project], None] | None) -> None:
    run, raw = start_run(carol, acme)
    if change is not None:
        change(carol, acme)
    prepared, orm = _both(raw, monkeypatch)
    assert prepared == orm and prepared is not None


def test_revoked_ended_and_unknown_credentials_read_alike(
        carol: User, acme: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    run, raw = start_run(carol, acme)
    revoke_credential(run)
    prepared, orm = _both(raw, monkeypatch)
    assert prepared == orm and prepared[4] is True and prepared[5] is False
    ended, ended_raw = start_run(carol, acme, status="completed")
    prepared, orm = _both(ended_raw, monkeypatch)
    assert prepared == orm and prepared[5] is False
    assert _both(raw + "x", monkeypatch) == (None, None)
