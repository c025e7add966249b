"""Starting and following a run (runs.start_read, runs.stream_open) record that a
member's token reached the project, as kionga.access does: a token that only ever
starts and follows runs there is listed by the project's admins
(GET /api/v1/projects/{id}/tokens)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from kionga.models import Project, TokenUse
from kionga.tokens import create_token
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.runs_helpers import open_with_token, start_with_token

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("runner_configured", "rds")]

def _used_in(project: Project) -> set[int]:
    return set(TokenUse.objects.filter(project=project).values_list("token_id", flat=True))


def test_starting_and_following_a_run_records_the_use(api: Api, alice: User, carol: User,
                                                      acme: Project) -> None:
    design = make_design(alice, acme)
    starter, raw_starter = create_token(carol, "starter")
    follower, raw_follower = create_token(carol, "follower")
    run = start_with_token(raw_starter, design.pk).json()
    assert _used_in(acme) == {starter.pk}
    assert open_with_token(raw_follower, design.pk, run["id"], -1)[0] == carol.pk
    assert _used_in(acme) == {starter.pk, follower.pk}
    listed = api.client_for(alice).get(f"/api/v1/projects/{acme.pk}/tokens").json()["tokens"]
    assert {starter.pk, follower.pk} <= {t["id"] for t in listed}
