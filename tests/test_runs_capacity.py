"""A start beyond the runner's cap is refused at once with 429, never queued silently."""

from typing import Any

import pytest
import redis

from runner import protocol
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import make_design
from tests.runs_helpers import start_url

# Real commits: a run is dispatched only when its transaction commits.
pytestmark = pytest.mark.django_db(transaction=True)


def test_it_answers_429_at_capacity(api: Api, alice: Any, acme: Any, runner_configured: Any,
                                    rds: redis.Redis) -> None:
    runner_configured.KIONGA_DESIGNER_MAX_RUNS = 2
    runner_configured.KIONGA_PROJECT_MAX_RUNS = 10  # the runner's cap applies first
    design = make_design(alice, acme)
    client = api.client_for(alice)
    first = [client.post(start_url(design), {}, format="json") for _ in range(2)]
    assert [r.status_code for r in first] == [201, 201]
    error = api.assert_error(client.post(start_url(design), {}, format="json"), 429,
                             "runner_at_capacity")
    assert error["details"]["max_runs"] == 2
    assert Run.objects.count() == 2 and len(rds.lrange(protocol.QUEUE, 0, -1)) == 2
    protocol.release_slot(rds, first[0].json()["id"])
    assert client.post(start_url(design), {}, format="json").status_code == 201


def test_it_uses_the_cap_the_runner_announced(api: Api, alice: Any, acme: Any,
                                              runner_configured: Any,
                                              rds: redis.Redis) -> None:
    rds.hset(protocol.RUNNER_INFO_KEY, "max_runs", 1)
    runner_configured.KIONGA_PROJECT_MAX_RUNS = 10
    design = make_design(alice, acme)
    client = api.client_for(alice)
    assert client.post(start_url(design), {}, format="json").status_code == 201
    api.assert_error(client.post(start_url(design), {}, format="json"), 429,
                     "runner_at_capacity")


@pytest.mark.parametrize("announced", [0, 1000])
def test_it_keeps_the_announced_cap_within_the_configured_one(
        api: Api, alice: Any, acme: Any, runner_configured: Any, rds: redis.Redis,
        announced: int) -> None:
    # The announcement is the runner's to write: 0 must not stop every start, and a
    # bigger one must not take the gateway past its own KIONGA_DESIGNER_MAX_RUNS.
    rds.hset(protocol.RUNNER_INFO_KEY, "max_runs", announced)
    runner_configured.KIONGA_DESIGNER_MAX_RUNS = 2
    runner_configured.KIONGA_PROJECT_MAX_RUNS = 10
    design = make_design(alice, acme)
    client = api.client_for(alice)
    first = [client.post(start_url(design), {}, format="json") for _ in range(2)]
    assert [r.status_code for r in first] == [201, 201]
    error = api.assert_error(client.post(start_url(design), {}, format="json"), 429,
                             "runner_at_capacity")
    assert error["details"]["max_runs"] == 2
