"""A run start's admission (runs.admission): the API throttles are counted in the
slot's own Redis script (runs.quota.take_slot), one round trip, and the answers stay
DRF's: 429 throttled before any other refusal, a throttled start holding no slot even
for a moment, a refused start still counted."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from kionga import throttles
from kionga.models import Project
from runner import protocol
from runs import quota
from runs.models import Run
from tests.conftest import Api
from tests.designs_helpers import make_design

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("runner_configured")]

HELLO = {"input": "hello"}


def start(client: APIClient, design_id: Any, body: dict[str, Any] = HELLO) -> tuple[int, Any]:
    response = client.post(f"/api/v1/agent-designs/{design_id}/runs", body, format="json")
    return response.status_code, response.json()["error"] if response.status_code >= 400 \
        else response.json()


class CountingRedis:
    """The gateway's client, counting the commands each module sends."""

    def __init__(self, client: redis.Redis) -> None:
        self.client = client
        self.commands: list[str] = []

    def __getattr__(self, name: str) -> Any:
        self.commands.append(name)
        return getattr(self.client, name)


@pytest.fixture
def window(alice: User, rds: redis.Redis) -> Any:
    key = f"{throttles.KEY_PREFIX}user:{alice.pk}"
    rds.delete(key)
    yield key
    rds.delete(key)


def _refusal(answer: tuple[int, Any]) -> tuple[int, str]:
    return answer[0], answer[1]["code"]


def test_throttle_and_slot_take_one_redis_call(api: Api, alice: User, acme: Project,
                                               rds: redis.Redis, window: str,
                                               monkeypatch: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    counted = CountingRedis(rds)
    monkeypatch.setattr(quota, "sync_redis", lambda: counted)
    monkeypatch.setattr(throttles, "sync_redis", lambda: counted)
    assert start(client, design.pk)[0] == 201
    assert counted.commands == ["eval"]
    assert rds.zcard(window) == 1  # the request was counted
    assert rds.zcard(protocol.SLOTS_KEY) == 1


def test_a_throttled_start_takes_no_slot(api: Api, alice: User, acme: Project,
                                         rds: redis.Redis, window: str, settings: Any) -> None:
    settings.KIONGA_THROTTLE_USER = "1/minute"
    design = make_design(alice, acme)
    client = api.client_for(alice)
    assert start(client, design.pk)[0] == 201
    slots_before = rds.zrange(protocol.SLOTS_KEY, 0, -1)
    members_before = rds.smembers(quota.project_runs_key(acme.pk))
    assert _refusal(start(client, design.pk)) == (429, "throttled")
    assert rds.zrange(protocol.SLOTS_KEY, 0, -1) == slots_before
    assert rds.smembers(quota.project_runs_key(acme.pk)) == members_before
    assert Run.objects.count() == 1


@pytest.mark.parametrize("case", ["missing design", "viewer", "bad stop_after"])
def test_throttled_wins_over_every_other_refusal_as_on_the_drf_path(
        case: str, api: Api, alice: User, bob: User, acme: Project, rds: redis.Redis,
        window: str, settings: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(bob if case == "viewer" else alice)
    target = design.pk if case != "missing design" else design.pk.__class__(int=1)
    body = {"input": "hi", "stop_after": "no-such-node"} if case == "bad stop_after" else HELLO
    settings.KIONGA_THROTTLE_USER = "1/minute"
    bob_key = f"{throttles.KEY_PREFIX}user:{bob.pk}"
    rds.delete(bob_key)
    first = _refusal(start(client, target, body))
    assert first[0] in (400, 403, 404)  # refused for itself, and counted
    assert _refusal(start(client, target, body)) == (429, "throttled")
    assert not Run.objects.exists() and rds.zcard(protocol.SLOTS_KEY) == 0
    rds.delete(bob_key)


def test_the_announced_runner_cap_and_the_project_share_apply(
        api: Api, alice: User, acme: Project, rds: redis.Redis, window: str,
        settings: Any) -> None:
    design = make_design(alice, acme)
    client = api.client_for(alice)
    rds.hset(protocol.RUNNER_INFO_KEY, "max_runs", 1)
    assert start(client, design.pk)[0] == 201
    # The runner announced 1 slot: the project's half of it is 1, taken.
    assert _error(start(client, design.pk)) == (
        429, "project_run_quota", {"max_runs_per_project": 1})
    settings.KIONGA_PROJECT_MAX_RUNS = 5
    assert _error(start(client, design.pk)) == (429, "runner_at_capacity", {"max_runs": 1})


def _error(answer: tuple[int, Any]) -> tuple[int, str, dict[str, Any]]:
    return answer[0], answer[1]["code"], answer[1]["details"]
