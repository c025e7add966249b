"""The hot start's admission: the API throttles are counted in the slot's own Redis
script (runs.quota.take_slot), one round trip, and the answers stay DRF's: 429
throttled before any other refusal, a throttled start holding no slot even for a
moment, a refused start still counted."""

from __future__ import annotations

from typing import Any

import pytest
import redis
from django.contrib.auth.models import User
from rest_framework.exceptions import APIException

from kionga import throttles
from kionga.errors import APIError
from kionga.models import Project
from kionga.tokens import create_token
from runner import protocol
from runs import quota
from runs.hot.start import start_with_token
from runs.models import Run
from runs.start import StartRequest
from tests.designs_helpers import make_design

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("runner_configured")]

HELLO = StartRequest("hello", None, None, False, None, None)


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


def _refusal(call: Any) -> tuple[int, str]:
    with pytest.raises(APIException) as caught:
        call()
    return caught.value.status_code, caught.value.default_code


def test_throttle_and_slot_take_one_redis_call(alice: User, acme: Project, rds: redis.Redis,
                                               window: str, monkeypatch: Any) -> None:
    design = make_design(alice, acme)
    raw = create_token(alice, "cli")[1]
    counted = CountingRedis(rds)
    monkeypatch.setattr(quota, "sync_redis", lambda: counted)
    monkeypatch.setattr(throttles, "sync_redis", lambda: counted)
    start_with_token(raw, design.pk, HELLO, False)
    assert counted.commands == ["eval"]
    assert rds.zcard(window) == 1  # the request was counted
    assert rds.zcard(protocol.SLOTS_KEY) == 1


def test_a_throttled_start_takes_no_slot(alice: User, acme: Project, rds: redis.Redis,
                                         window: str, settings: Any) -> None:
    settings.KIONGA_THROTTLE_USER = "1/minute"
    design = make_design(alice, acme)
    raw = create_token(alice, "cli")[1]
    start_with_token(raw, design.pk, HELLO, False)
    slots_before = rds.zrange(protocol.SLOTS_KEY, 0, -1)
    members_before = rds.smembers(quota.project_runs_key(acme.pk))
    assert _refusal(lambda: start_with_token(raw, design.pk, HELLO, False)) == (429, "throttled")
    assert rds.zrange(protocol.SLOTS_KEY, 0, -1) == slots_before
    assert rds.smembers(quota.project_runs_key(acme.pk)) == members_before
    assert Run.objects.count() == 1


@pytest.mark.parametrize("case", ["missing design", "viewer", "bad stop_after"])
def test_throttled_wins_over_every_other_refusal_as_on_the_drf_path(
        case: str, alice: User, bob: User, acme: Project, rds: redis.Redis, window: str,
        settings: Any) -> None:
    design = make_design(alice, acme)
    caller = bob if case == "viewer" else alice
    raw = create_token(caller, "cli")[1]
    target = design.pk if case != "missing design" else design.pk.__class__(int=1)
    body = StartRequest("hi", None, None, False, "no-such-node", None) \
        if case == "bad stop_after" else HELLO
    settings.KIONGA_THROTTLE_USER = "1/minute"
    bob_key = f"{throttles.KEY_PREFIX}user:{bob.pk}"
    rds.delete(bob_key)
    first = _refusal(lambda: start_with_token(raw, target, body, False))
    assert first[0] in (400, 403, 404)  # refused for itself, and counted
    assert _refusal(lambda: start_with_token(raw, target, body, False)) == (429, "throttled")
    assert not Run.objects.exists() and rds.zcard(protocol.SLOTS_KEY) == 0
    rds.delete(bob_key)


def test_the_announced_runner_cap_and_the_project_share_apply(
        alice: User, acme: Project, rds: redis.Redis, window: str, settings: Any) -> None:
    design = make_design(alice, acme)
    raw = create_token(alice, "cli")[1]
    rds.hset(protocol.RUNNER_INFO_KEY, "max_runs", 1)
    start_with_token(raw, design.pk, HELLO, False)
    # The runner announced 1 slot: the project's half of it is 1, taken.
    assert _error(lambda: start_with_token(raw, design.pk, HELLO, False)) == (
        429, "project_run_quota", {"max_runs_per_project": 1})
    settings.KIONGA_PROJECT_MAX_RUNS = 5
    assert _error(lambda: start_with_token(raw, design.pk, HELLO, False)) == (
        429, "runner_at_capacity", {"max_runs": 1})


def _error(call: Any) -> tuple[int, str, dict[str, Any]]:
    with pytest.raises(APIError) as caught:
        call()
    return caught.value.status_code, caught.value.code, caught.value.details
