"""The default limits (runner.settings.DEFAULT_MAX_RUNS, a project's share half of it)
hold to the run: the share's last start is taken and the next refused 429
project_run_quota; the runner's last slot is taken and the next refused 429
runner_at_capacity, whatever project asks."""

import uuid
from typing import Any

import pytest
import redis

from runner.settings import DEFAULT_MAX_RUNS
from runs.quota import take_slot
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.runs_helpers import start_url

# Real commits: a run is dispatched only when its transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)

SHARE = (DEFAULT_MAX_RUNS + 1) // 2
# A project with no members here: its runs fill the slots the test does not start.
OTHER = 10**9


def fill(project_id: int, count: int) -> None:
    for _ in range(count):
        take_slot(str(uuid.uuid4()), project_id)


def test_the_defaults_take_a_thousand_runs_and_half_per_project(
        api: Api, alice: Any, mallory: Any, acme: Any, evil: Any, settings: Any,
        runner_configured: Any, rds: redis.Redis) -> None:
    runner_configured.KIONGA_DESIGNER_MAX_RUNS = DEFAULT_MAX_RUNS  # the gateway's default
    runner_configured.KIONGA_PROJECT_MAX_RUNS = 0  # the default: half the runner
    assert (DEFAULT_MAX_RUNS, SHARE) == (1000, 500)
    ours, theirs = make_design(alice, acme), make_design(mallory, evil)
    alice_client, mallory_client = api.client_for(alice), api.client_for(mallory)
    fill(acme.pk, SHARE - 1)
    assert alice_client.post(start_url(ours), {}, format="json").status_code == 201
    error = api.assert_error(alice_client.post(start_url(ours), {}, format="json"), 429,
                             "project_run_quota")
    assert error["details"] == {"max_runs_per_project": SHARE}
    # Other tenants fill the rest but one slot, which the next project still gets.
    fill(OTHER, DEFAULT_MAX_RUNS - SHARE - 1)
    assert mallory_client.post(start_url(theirs), {}, format="json").status_code == 201
    error = api.assert_error(mallory_client.post(start_url(theirs), {}, format="json"), 429,
                             "runner_at_capacity")
    assert error["details"]["max_runs"] == DEFAULT_MAX_RUNS
