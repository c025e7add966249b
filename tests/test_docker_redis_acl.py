"""Redis users (docker/redis-users.acl, started by docker/redis-start.sh as compose does):
nobody connects without a user; the runner's user can do everything a real runner
worker does (a large run of a project over its live budget included) and nothing
else — it cannot read the ingest stream or other runs' events, acknowledge or trim
the ingest stream, cancel runs, or touch the gateway's queue."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import yaml

from runner import protocol
from tests.docker_kit import (
    REDIS_ACL,
    REDIS_K8S_CONFIG,
    REDIS_START,
    load_compose,
    service,
    unwrap_command,
)
from tests.redis_acl_kit import GATEWAY_PASSWORD, RUNNER_PASSWORD, AclRedis
from tests.runner_process.runner_kit import (
    TOKEN,
    Worker,
    client_app,
    free_port,
    http_get,
    ingest_events,
    mock_graph,
    payload,
    read_run,
    send,
    wait_for,
)


@pytest.fixture(scope="module")
def acl_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AclRedis]:
    server = AclRedis(tmp_path_factory.mktemp("redis-acl"))
    yield server
    server.proc.kill()
    server.proc.wait(10)


@pytest.fixture(scope="module")
def gateway(acl_redis: AclRedis) -> redis.Redis:
    return acl_redis.client("gateway", GATEWAY_PASSWORD)


@pytest.fixture(scope="module")
def runner(acl_redis: AclRedis) -> redis.Redis:
    return acl_redis.client("runner", RUNNER_PASSWORD)


def test_it_refuses_a_client_without_a_user(acl_redis: AclRedis) -> None:
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(port=acl_redis.port).ping()
    with pytest.raises(redis.AuthenticationError):
        acl_redis.client("runner", GATEWAY_PASSWORD).ping()


def test_it_lets_a_real_runner_worker_do_its_work(acl_redis: AclRedis, gateway: redis.Redis,
                                                  tmp_path: Path) -> None:
    worker = Worker(tmp_path / "worker.log", queue=protocol.QUEUE,
                    REDIS_URL=acl_redis.url("runner", RUNNER_PASSWORD))
    try:
        worker.wait_ready()
        app = client_app(acl_redis.url("gateway", GATEWAY_PASSWORD))
        run_id = send(app, gateway, payload(mock_graph()), queue=protocol.QUEUE)
        events = read_run(gateway, run_id)
        assert events[-1]["type"] == "run.completed"
        assert len(ingest_events(gateway, run_id)) == len(
            [e for e in events if e["type"] != "node.delta"])
        cancelled = payload(mock_graph())
        gateway.set(protocol.cancel_key(cancelled["run_id"]), "1", ex=60)
        assert read_run(gateway, send(app, gateway, cancelled, queue=protocol.QUEUE))[-1][
            "type"] == "run.cancelled"
        assert wait_for(lambda: not protocol.slot_alive(gateway, run_id), 5)
        # A large run of a project over its live budget: the runner records its stream
        # in the project's account and trims it (a selector allows XTRIM on run streams).
        gateway.hset(protocol.live_bytes_key(1), "another-run",
                     f"{protocol.PROJECT_LIVE_MAX_BYTES}:9999999999")
        large = payload(mock_graph(), text=" ".join(f"w{i}" for i in range(20_000)))
        assert read_run(gateway, send(app, gateway, large, queue=protocol.QUEUE),
                        seconds=30)[-1]["type"] == "run.completed"
        assert gateway.hget(protocol.live_bytes_key(1), large["run_id"]) is None  # pressed
        assert 0 < int(gateway.memory_usage(protocol.run_stream(large["run_id"])) or 0) <= (
            protocol.LIVE_STREAM_PRESSED_BYTES)
        assert http_get(worker.port, "/capacity", TOKEN)[0] == 200
        assert gateway.hget(protocol.RUNNER_INFO_KEY, "max_runs") == b"8"
        app.close()
    finally:
        worker.stop()
    assert "NOPERM" not in worker.log() and "NoPermission" not in worker.log()


RUN = "kionga:run:0b7c6a3e-0000-4000-8000-000000000001"
DENIED: dict[str, Callable[[redis.Redis], Any]] = {
    "read the ingest stream": lambda r: r.xrange(protocol.INGEST_STREAM),
    "consume the ingest stream": lambda r: r.xreadgroup(
        protocol.INGEST_GROUP, "x", {protocol.INGEST_STREAM: ">"}),
    "acknowledge": lambda r: r.xack(protocol.INGEST_STREAM, protocol.INGEST_GROUP, "1-0"),
    "trim the ingest stream": lambda r: r.xtrim(protocol.INGEST_STREAM, maxlen=0),
    "delete an ingest entry": lambda r: r.xdel(protocol.INGEST_STREAM, "1-0"),
    "write the dead-letter stream": lambda r: r.xadd(protocol.DEAD_LETTER_STREAM, {"a": "b"}),
    "read a run's live events": lambda r: r.xrange(f"{RUN}:events"),
    "cancel a run": lambda r: r.set(f"{RUN}:cancel", "1"),
    "read the gateway's queue": lambda r: r.lrange("gateway", 0, -1),
    "push to the gateway's queue": lambda r: r.lpush("gateway", "x"),
    "touch the gateway worker's bookkeeping": lambda r: r.hset("unacked", "a", "b"),
    "list keys": lambda r: r.keys("*"),
    "flush": lambda r: r.flushall(),
    "read the configuration": lambda r: r.config_get("*"),
    "read the users": lambda r: r.acl_list(),
    "publish": lambda r: r.publish("/0.celery.pidbox", "x"),
    "read the runner announcement": lambda r: r.hgetall(protocol.RUNNER_INFO_KEY),
    "run a script on another key": lambda r: r.eval("return redis.call('GET', KEYS[1])", 1,
                                                    "kionga:secret"),
    # The slots are the gateway's: the runner may count them and renew or free a lease
    # whose token it holds (tests/test_runs_slot_leases.py), nothing more.
    "add a slot": lambda r: r.zadd(protocol.SLOTS_KEY, {"fake": 9e9}),
    "remove a slot": lambda r: r.zrem(protocol.SLOTS_KEY, "any-run"),
    "read the slots": lambda r: r.zrange(protocol.SLOTS_KEY, 0, -1),
    "read the lease tokens": lambda r: r.hgetall(protocol.LEASES_KEY),
    "write a lease token": lambda r: r.hset(protocol.LEASES_KEY, "any-run", "mine"),
    "create a lease": lambda r: r.set(protocol.lease_key("forged"), "any-run"),
    "read a lease": lambda r: r.get(protocol.lease_key("forged")),
    "list the leases": lambda r: r.scan(match=f"{protocol.LEASE_PREFIX}*"),
    "take a slot with the gateway's script": lambda r: protocol.acquire_slot(r, "fake", 8),
}


@pytest.mark.parametrize("action", list(DENIED))
def test_it_denies_the_runner_everything_else(runner: redis.Redis, action: str) -> None:
    with pytest.raises(redis.exceptions.NoPermissionError):
        DENIED[action](runner)


def test_it_lets_the_runner_append_to_the_streams(runner: redis.Redis) -> None:
    assert runner.xadd(protocol.INGEST_STREAM, {"run": "r", "e": "{}", "mac": "m"})
    assert runner.xadd(f"{RUN}:events", {"e": "{}"})
    assert runner.expire(f"{RUN}:events", 60)
    assert runner.xtrim(f"{RUN}:events", maxlen=1, approximate=False) == 0
    account = protocol.live_bytes_key(7)
    assert runner.eval(protocol.LIVE_BYTES_LUA, 1, account, "r", 100_000, 60) == 0


def test_it_starts_compose_redis_with_the_users() -> None:
    compose = load_compose()
    redis_service = service(compose, "redis")
    assert unwrap_command(redis_service["command"]).startswith("sh /etc/kionga/redis-start.sh")
    targets = {c["source"]: c["target"] for c in redis_service["configs"]}
    assert targets == {"redis-users": "/etc/kionga/redis-users.acl",
                       "redis-start": "/etc/kionga/redis-start.sh"}
    files = {name: (REDIS_ACL.parent / c["file"]).resolve()
             for name, c in compose["configs"].items()}
    assert files == {"redis-users": REDIS_ACL.resolve(), "redis-start": REDIS_START.resolve()}
    assert "--user gateway" in str(redis_service["healthcheck"]["test"])
    assert set(redis_service["environment"]) == {"REDIS_GATEWAY_PASSWORD",
                                                 "REDIS_RUNNER_PASSWORD"}
    assert "user default off" in REDIS_ACL.read_text().splitlines()


def test_compose_starts_redis_with_a_memory_limit_and_no_eviction(gateway: redis.Redis) -> None:
    assert gateway.config_get("maxmemory-policy") == {
        "maxmemory-policy": protocol.REDIS_MAXMEMORY_POLICY}
    assert gateway.config_get("maxmemory") == {"maxmemory": str(512 * 1024 * 1024)}


def test_the_kubernetes_redis_settings_are_a_redis_config(tmp_path: Path) -> None:
    """docker/k8s/redis.yaml's redis.conf, as a Redis loads it."""
    config: Any = yaml.safe_load(REDIS_K8S_CONFIG.read_text(encoding="utf-8"))
    conf = tmp_path / "redis.conf"
    conf.write_text(config["data"]["redis.conf"], encoding="utf-8")
    port = free_port()
    proc = subprocess.Popen(["redis-server", str(conf), "--port", str(port), "--bind",
                             "127.0.0.1", "--dir", str(tmp_path), "--save", ""],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    client = redis.Redis(port=port)
    try:
        assert wait_for(lambda: _pings(client), 10)
        assert client.config_get("maxmemory-policy") == {
            "maxmemory-policy": protocol.REDIS_MAXMEMORY_POLICY}
        assert client.config_get("maxmemory") == {"maxmemory": str(512 * 1024 * 1024)}
    finally:
        client.close()
        proc.kill()
        proc.wait(10)


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False
