"""The runner's cap holds across its processes, and each project gets at most its share
(half of it by default): one project's runs waiting on approvals leave room for others."""

from typing import Any

import pytest

from kionga.models import Project, Role
from tests.conftest import Api, make_member
from tests.e2e.conftest import Http
from tests.e2e.helpers import approval_graph, wait_for, wait_stored
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def waiting_runs(http: Http, design_id: str, count: int) -> list[str]:
    runs = [http.start(design_id, input=f"run {i}") for i in range(count)]
    assert [r.status_code for r in runs] == [201] * count, [r.text for r in runs]
    ids = [r.json()["id"] for r in runs]
    wait_for(lambda: all(http.run(design_id, i)["status"] == "waiting" for i in ids),
             message="runs did not reach their approvals")
    return ids


def test_it_shares_the_runner_between_projects(stack: Stack, api: Api, alice: Any,
                                               mallory: Any, acme: Any, evil: Any) -> None:
    share = stack.max_runs // 2
    ours = Http(stack, api.token_for(alice))
    ours_design = ours.create_design(acme.pk, approval_graph())
    ours_ids = waiting_runs(ours, ours_design, share)
    refused = ours.start(ours_design, input="beyond our share")
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "project_run_quota"
    # Another tenant still starts, up to the runner's cap.
    theirs = Http(stack, api.token_for(mallory))
    theirs_design = theirs.create_design(evil.pk, approval_graph())
    waiting_runs(theirs, theirs_design, stack.max_runs - share)
    third = Project.objects.create(slug="third", name="Third")
    late = Http(stack, api.token_for(make_member("tess", third, Role.EDITOR)))
    refused = late.start(late.create_design(third.pk, approval_graph()), input="full")
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "runner_at_capacity"
    for run_id in ours_ids:
        ours.client.post(f"/api/v1/agent-designs/{ours_design}/runs/{run_id}/cancel")
    for run_id in ours_ids:
        assert wait_stored(ours, ours_design, run_id)["status"] == "cancelled"
    assert wait_for(lambda: ours.start(ours_design, input="again").status_code == 201)
