"""Starting and following runs refuses a token made from one a project admin revoked
for the project, whether it was made before or after the revocation: the revocation
is written on every token made from the revoked one (runs.start_read and
runs.stream_open read it with the design or the run)."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from django.contrib.auth.models import User
from rest_framework.exceptions import APIException

from kionga.models import Project
from kionga.tokens import create_token
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.projects_helpers import MY_TOKENS, bearer, made_token
from tests.runs_helpers import open_with_token, queued_tasks, start_with_token

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("runner_configured")]

def _status(call: Any) -> int:
    with pytest.raises(APIException) as caught:
        call()
    return int(caught.value.status_code)


def _child(parent: str, name: str) -> str:
    """A token made by the parent token's request (POST /api/v1/me/tokens)."""
    return str(made_token(bearer(parent), name)["token"])


def test_children_of_a_token_revoked_for_the_project_are_refused(
        api: Api, alice: User, carol: User, acme: Project, rds: redis.Redis) -> None:
    design = make_design(alice, acme)
    run = Run.objects.create(project=acme, design=design, revision=1, content_sha256="x" * 64,
                             created_by=alice, status="completed")
    leaked, raw_leaked = create_token(carol, "leaked")
    before = _child(raw_leaked, "before")
    grandchild = _child(before, "grandchild")
    open_with_token(raw_leaked, design.pk, run.pk, -1)  # used in acme
    assert api.client_for(alice).delete(
        f"/api/v1/projects/{acme.pk}/tokens/{leaked.pk}").status_code == 204
    after = _child(raw_leaked, "after")
    for raw in (before, grandchild, after):
        assert start_with_token(raw, design.pk).status_code == 404
        assert _status(lambda raw=raw: open_with_token(raw, design.pk, run.pk, -1)) == 404
    assert Run.objects.count() == 1 and not queued_tasks(rds)
    # carol's unrelated token still starts runs and reads them there.
    other = create_token(carol, "other")[1]
    assert open_with_token(other, design.pk, run.pk, -1)[0] == carol.pk
    started = start_with_token(other, design.pk)
    assert Run.objects.get(pk=started.json()["id"]).created_by_id == carol.pk


def test_children_of_a_revoked_token_are_dead(carol: User, alice: User,
                                             acme: Project) -> None:
    design = make_design(alice, acme)
    root, raw_root = create_token(carol, "root")
    child = _child(raw_root, "child")
    assert bearer(raw_root).delete(f"{MY_TOKENS}/{root.pk}").status_code == 204
    assert start_with_token(child, design.pk).status_code == 401
