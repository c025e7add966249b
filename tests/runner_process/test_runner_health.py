"""GET /health and /capacity on KIONGA_DESIGNER_PORT: bearer token only; slots from Redis."""

from __future__ import annotations

import uuid

import pytest
import redis
from celery import Celery

from runner import protocol
from tests.runner_process.runner_kit import (
    TOKEN,
    Worker,
    http_get,
    knowledge_graph,
    payload,
    read_run,
    send,
    slow_gateway,
    wait_for,
)


def take_slot(rds: redis.Redis, run_id: str) -> bool:
    return wait_for(lambda: protocol.acquire_slot(rds, run_id, 8) == protocol.SLOT_TAKEN, 20)


@pytest.mark.parametrize("path", ["/health", "/capacity", "/nowhere"])
@pytest.mark.parametrize("token", [None, "", "wrong-token-0123456789", TOKEN[:-1], TOKEN + "x"])
def test_it_demands_the_runner_token(runner_worker: Worker, path: str, token: str | None) -> None:
    status, body = http_get(runner_worker.port, path, token)
    assert status == 401
    assert body["error"]["code"] == "not_authenticated"


def test_it_answers_health_with_the_token(runner_worker: Worker) -> None:
    assert http_get(runner_worker.port, "/health", TOKEN) == (200, {"status": "ok",
                                                                    "max_runs": 8})
    assert http_get(runner_worker.port, "/nowhere", TOKEN)[0] == 404


def test_it_announces_its_cap_in_redis(runner_worker: Worker, rds: redis.Redis) -> None:
    # The last runner to start wrote it (other tests start workers of their own).
    info = rds.hgetall(protocol.RUNNER_INFO_KEY)
    assert info[b"max_runs"] == b"8"
    assert int(info[b"pid"]) > 0
    started = info[b"started_at"]
    assert isinstance(started, bytes) and started.startswith(b"20")


def test_it_counts_slots_in_use(runner_worker: Worker, rds: redis.Redis,
                                celery_client: Celery) -> None:
    # Other sessions may hold slots meanwhile (db 5 is shared): ours must be counted.
    queued = [str(uuid.uuid4()) for _ in range(2)]
    for queued_id in queued:  # slots the gateway took for runs still in the queue
        assert take_slot(rds, queued_id)
    with slow_gateway(delay=20) as (url, _seen):
        run_id = send(celery_client, rds, payload(knowledge_graph(), callback_url=url))
        read_run(rds, run_id, until=lambda e: e.get("node_id") == "search")
        status, body = http_get(runner_worker.port, "/capacity", TOKEN)
        assert status == 200 and body["max_runs"] == 8 and body["in_use"] >= 3
        assert body["available"] == max(0, 8 - body["in_use"])
        rds.set(protocol.cancel_key(run_id), "1", ex=60)
        read_run(rds, run_id)
    assert wait_for(lambda: not protocol.slot_alive(rds, run_id), 2)
    protocol.release_slot(rds, *queued)


def test_it_counts_exactly_the_live_slots(runner_worker: Worker, rds: redis.Redis) -> None:
    def agrees() -> bool:  # checked when no other session changed the slots meanwhile
        before = protocol.slots_in_use(rds)
        body = http_get(runner_worker.port, "/capacity", TOKEN)[1]
        if protocol.slots_in_use(rds) != before:
            return False
        return body == {"max_runs": 8, "in_use": before, "available": max(0, 8 - before)}

    assert wait_for(agrees, 5)
