"""Fixtures and helpers for the runs tests: a configured runner, clean Redis keys."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from kionga.redis_client import sync_redis
from runner import protocol

RUNNER_TOKEN = "test-runner-token-0123456789"


@pytest.fixture
def runner_configured(settings: Any) -> Any:
    settings.KIONGA_AGENT_DESIGNER_RUNNER_URL = "http://127.0.0.1:9100"
    settings.KIONGA_AGENT_DESIGNER_RUNNER_TOKEN = RUNNER_TOKEN
    settings.KIONGA_DESIGNER_MAX_RUNS = 8
    return settings


@pytest.fixture
def rds() -> Iterator[redis.Redis]:
    """The gateway's Redis with the runner's keys cleared before and after."""
    client = sync_redis()
    _clear(client)
    yield client
    _clear(client)


def _clear(client: redis.Redis) -> None:
    client.delete(protocol.SLOTS_KEY, protocol.LEASES_KEY, protocol.RUNNER_INFO_KEY,
                  protocol.PARKED_KEY, protocol.QUEUE)


def queued_tasks(client: redis.Redis) -> list[tuple[dict[str, Any], str]]:
    """(payload, signature) of the run tasks waiting in the runner's queue."""
    tasks = []
    for raw in client.lrange(protocol.QUEUE, 0, -1):  # type: ignore[union-attr]
        message = json.loads(raw)
        args, _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        tasks.append((args[0], args[1]))
    return tasks


def start_url(design: Any) -> str:
    return f"/api/v1/agent-designs/{design.pk}/runs"

