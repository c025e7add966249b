"""runs.credentials.find_credential: the one prepared read of a resource call (the
credential, its run, the run's starter and the starter's role, and the route's resource
of the run's project) says, in every case the internal listener tells apart, what the
rows say."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga.models import Membership, Project, Role
from kionga.resource_models import ModelEndpoint
from runs.credentials import find_credential, revoke_credential
from runs.models import Run, RunCredential
from tests.internal_helpers import start_run

pytestmark = pytest.mark.django_db


def _seen(raw: str) -> Any:
    """The prepared read of raw as a comparable tuple (None when not found)."""
    found = find_credential(raw)
    if found is None:
        return None
    run = found.run
    return (run.pk, run.status, run.project_id, run.resources, found.revoked, found.live,
            found.starter_role, run.created_by and run.created_by.username,
            run.created_by and run.created_by.is_active)


def _stored(acme: Project, run_pk: Any, live: bool) -> Any:
    """The same tuple from the rows, read one by one."""
    run = Run.objects.select_related("created_by").get(pk=run_pk)
    revoked = RunCredential.objects.get(run=run).revoked_at is not None
    starter = run.created_by
    role = None if starter is None else Membership.objects.filter(
        project=acme, user=starter).values_list("role", flat=True).first()
    return (run.pk, run.status, run.project_id, run.resources, revoked, live, role,
            starter and starter.username, starter and starter.is_active)


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
def test_it_reads_what_the_rows_say(carol: User, acme: Project,
                                    change: Callable[[User, Project], None] | None) -> None:
    run, raw = start_run(carol, acme)
    if change is not None:
        change(carol, acme)
    assert _seen(raw) == _stored(acme, run.pk, live=True)
    expected_role: dict[Callable[[User, Project], None] | None, str] = {
        None: Role.EDITOR, _made_viewer: Role.VIEWER, _deactivated: Role.EDITOR}
    assert _seen(raw)[6] == expected_role.get(change)


def test_revoked_ended_and_unknown_credentials(carol: User, acme: Project) -> None:
    run, raw = start_run(carol, acme)
    revoke_credential(run)
    seen = _seen(raw)
    assert seen == _stored(acme, run.pk, live=False) and seen[4] is True
    ended, ended_raw = start_run(carol, acme, status="completed")
    seen = _seen(ended_raw)
    assert seen == _stored(acme, ended.pk, live=False) and seen[4] is False
    assert _seen(raw + "x") is None


def test_it_reads_the_routes_resource_of_the_runs_project_only(carol: User, acme: Project,
                                                              evil: Project) -> None:
    run, raw = start_run(carol, acme)
    ours = ModelEndpoint.objects.create(project=acme, key="gpt", base_url="http://m/v1",
                                        model_name="m", secret="sk-ours")
    ModelEndpoint.objects.create(project=evil, key="other", base_url="http://m/v1",
                                 model_name="m", secret="sk-theirs")
    found = find_credential(raw, ModelEndpoint, "gpt")
    assert found is not None and _seen(raw) == _stored(acme, run.pk, live=True)
    assert isinstance(found.resource, ModelEndpoint)
    assert (found.resource.pk, found.resource.project_id, found.resource.secret) == \
        (ours.pk, acme.pk, "sk-ours")
    # Another project's key, and no such key: no row, the credential read all the same.
    for key in ("other", "nothing"):
        other = find_credential(raw, ModelEndpoint, key)
        assert other is not None and other.resource is None and other.run.pk == run.pk
    revoke_credential(run)
    revoked = find_credential(raw, ModelEndpoint, "gpt")
    assert revoked is not None and revoked.revoked and not revoked.live
    assert find_credential(raw + "x", ModelEndpoint, "gpt") is None
