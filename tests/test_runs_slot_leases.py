"""The runner's Redis user cannot hurt other tenants' capacity: on a Redis with the
compose users, it cannot add slots, free or renew a slot whose lease token it was not
given, nor make its announced cap stop every start or raise it past the gateway's."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import redis

from runner import protocol
from runner.protocol import RUNNER_FULL, SLOT_TAKEN
from tests.redis_acl_kit import GATEWAY_PASSWORD, RUNNER_PASSWORD, AclRedis

CONFIGURED = 2  # the gateway's KIONGA_DESIGNER_MAX_RUNS in these tests


@pytest.fixture(scope="module")
def acl_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AclRedis]:
    server = AclRedis(tmp_path_factory.mktemp("redis-acl-slots"))
    yield server
    server.proc.kill()
    server.proc.wait(10)


@pytest.fixture
def gateway(acl_redis: AclRedis) -> Iterator[redis.Redis]:
    client = acl_redis.client("gateway", GATEWAY_PASSWORD)
    client.flushall()
    yield client
    client.close()


@pytest.fixture
def runner(acl_redis: AclRedis) -> Iterator[redis.Redis]:
    client = acl_redis.client("runner", RUNNER_PASSWORD)
    yield client
    client.close()


def admit(gateway: redis.Redis, run_id: str, token: str | None = None,
          lease: float = protocol.QUEUED_LEASE_SECONDS) -> int:
    """The gateway's admission (the same Lua acquire_slot as runs.quota's), with the
    runner's announcement."""
    return protocol.acquire_slot(gateway, run_id, CONFIGURED, lease, token=token,
                                 info=protocol.RUNNER_INFO_KEY)


def test_the_runner_cannot_add_slots(gateway: redis.Redis, runner: redis.Redis) -> None:
    forged = protocol.lease_key("forged")
    attempts = [
        lambda: runner.zadd(protocol.SLOTS_KEY, {"fake-1": time.time() + 3600}),
        lambda: runner.hset(protocol.LEASES_KEY, "fake-1", "forged"),
        lambda: runner.set(forged, "fake-1", px=3_600_000),
        lambda: runner.eval("return redis.call('ZADD', KEYS[1], 9e9, 'fake-2')", 1,
                            protocol.SLOTS_KEY),
        lambda: protocol.acquire_slot(runner, "fake-3", CONFIGURED, token="forged"),
    ]
    for attempt in attempts:
        with pytest.raises(redis.exceptions.NoPermissionError):
            attempt()
    assert not runner.pexpire(forged, 3_600_000)  # renewing creates nothing
    assert [admit(gateway, "a"), admit(gateway, "b"), admit(gateway, "c")] == [
        SLOT_TAKEN, SLOT_TAKEN, RUNNER_FULL]
    assert protocol.slots_in_use(runner) == 2  # the runner may count them, no more


def test_the_runner_cannot_free_another_runs_slot(gateway: redis.Redis,
                                                  runner: redis.Redis) -> None:
    token = protocol.new_lease_token()
    assert admit(gateway, "victim", token) == SLOT_TAKEN
    for attempt in (lambda: runner.zrem(protocol.SLOTS_KEY, "victim"),
                    lambda: runner.hdel(protocol.LEASES_KEY, "victim"),
                    lambda: runner.hgetall(protocol.LEASES_KEY),
                    lambda: runner.zrange(protocol.SLOTS_KEY, 0, -1),
                    lambda: runner.scan(match=f"{protocol.LEASE_PREFIX}*")):
        with pytest.raises(redis.exceptions.NoPermissionError):
            attempt()
    protocol.free_lease(runner, protocol.new_lease_token())  # a wrong token frees nothing
    assert protocol.slot_alive(gateway, "victim")
    assert admit(gateway, "other") == SLOT_TAKEN
    assert admit(gateway, "third") == RUNNER_FULL  # the victim still holds its slot
    protocol.free_lease(runner, token)  # its own runner, with its token, frees it
    assert not protocol.slot_alive(gateway, "victim")
    assert admit(gateway, "third") == SLOT_TAKEN  # at once: no wait for a lease to run out


def test_the_runner_cannot_renew_another_runs_slot(gateway: redis.Redis,
                                                   runner: redis.Redis) -> None:
    token = protocol.new_lease_token()
    assert admit(gateway, "victim", token, lease=0.5) == SLOT_TAKEN
    assert not protocol.renew_lease(runner, protocol.new_lease_token(), 60)
    assert protocol.renew_lease(runner, token, 1.0)  # its own runner renews it
    time.sleep(1.2)
    assert not protocol.slot_alive(gateway, "victim")
    assert not protocol.renew_lease(runner, token, 60)  # a lease that ran out stays dead
    assert not protocol.slot_alive(gateway, "victim")


@pytest.mark.parametrize(("announced", "cap"), [
    (0, CONFIGURED), (-3, CONFIGURED), (1000, CONFIGURED), ("1.5", CONFIGURED),
    ("many", CONFIGURED), ("inf", CONFIGURED), ("nan", CONFIGURED), (1, 1),
    (CONFIGURED, CONFIGURED),
])
def test_the_announced_cap_counts_only_within_the_configured_range(
        gateway: redis.Redis, runner: redis.Redis, announced: int | str, cap: int) -> None:
    runner.hset(protocol.RUNNER_INFO_KEY, "max_runs", announced)
    assert protocol.runner_cap(gateway, CONFIGURED) == cap
    answers = [admit(gateway, f"run-{i}") for i in range(CONFIGURED + 1)]
    assert answers == [SLOT_TAKEN] * cap + [RUNNER_FULL] * (CONFIGURED + 1 - cap)
