"""Per-project quota: one project's runs in flight cannot take the whole runner."""

from typing import Any

import pytest
import redis

from runner import protocol
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.runs_helpers import start_url

# Real commits: a run is dispatched only when its transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)


def test_it_keeps_room_for_other_projects(api: Api, alice: Any, mallory: Any, acme: Any,
                                          evil: Any, runner_configured: Any,
                                          rds: redis.Redis) -> None:
    runner_configured.KIONGA_DESIGNER_MAX_RUNS = 4  # default share: half, 2 per project
    ours, theirs = make_design(alice, acme), make_design(mallory, evil)
    alice_client, mallory_client = api.client_for(alice), api.client_for(mallory)
    first = [alice_client.post(start_url(ours), {}, format="json") for _ in range(2)]
    assert [r.status_code for r in first] == [201, 201]
    error = api.assert_error(alice_client.post(start_url(ours), {}, format="json"), 429,
                             "project_run_quota")
    assert error["details"] == {"max_runs_per_project": 2}
    assert mallory_client.post(start_url(theirs), {}, format="json").status_code == 201
    # A run of ours ends (the runner frees its slot): our share has room again.
    protocol.release_slot(rds, first[0].json()["id"])
    assert alice_client.post(start_url(ours), {}, format="json").status_code == 201


def test_it_takes_the_configured_quota(api: Api, alice: Any, acme: Any,
                                       runner_configured: Any, rds: redis.Redis) -> None:
    runner_configured.KIONGA_PROJECT_MAX_RUNS = 3
    design = make_design(alice, acme)
    client = api.client_for(alice)
    assert [client.post(start_url(design), {}, format="json").status_code
            for _ in range(3)] == [201, 201, 201]
    api.assert_error(client.post(start_url(design), {}, format="json"), 429,
                     "project_run_quota")
