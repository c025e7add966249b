"""The runner's cap holds across its processes: one run beyond it is refused with 429."""

from typing import Any

import pytest

from tests.conftest import Api
from tests.e2e.conftest import Http
from tests.e2e.helpers import approval_graph, wait_for, wait_stored
from tests.stack import Stack

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_refuses_runs_beyond_the_cap(stack: Stack, api: Api, alice: Any, acme: Any) -> None:
    http = Http(stack, api.token_for(alice))
    design_id = http.create_design(acme.pk, approval_graph())
    runs = [http.start(design_id, input=f"run {i}") for i in range(stack.max_runs)]
    assert [r.status_code for r in runs] == [201] * stack.max_runs
    ids = [r.json()["id"] for r in runs]
    wait_for(lambda: all(http.run(design_id, i)["status"] == "waiting" for i in ids),
             message="runs did not reach their approvals")
    refused = http.start(design_id, input="one too many")
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "runner_at_capacity"
    for run_id in ids:
        http.client.post(f"/api/v1/agent-designs/{design_id}/runs/{run_id}/cancel")
    for run_id in ids:
        assert wait_stored(http, design_id, run_id)["status"] == "cancelled"
    assert wait_for(lambda: http.start(design_id, input="again").status_code == 201)
