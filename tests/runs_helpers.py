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
from runs.models import Run
from tests.designs_helpers import make_design

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
    """(payload, signature) of the run tasks waiting in the runner's queue, each payload
    parsed from the canonical JSON text it travels as."""
    return [(json.loads(text), signature) for text, signature in queued_texts(client)]


def queued_texts(client: redis.Redis) -> list[tuple[str, str]]:
    """(payload, signature) of the run tasks waiting in the runner's queue, as sent."""
    tasks = []
    for raw in client.lrange(protocol.QUEUE, 0, -1):  # type: ignore[union-attr]
        message = json.loads(raw)
        args, _kwargs, _embed = json.loads(base64.b64decode(message["body"]))
        tasks.append((args[0], args[1]))
    return tasks


def start_url(design: Any) -> str:
    return f"/api/v1/agent-designs/{design.pk}/runs"



def open_with_token(raw: str, design_id: Any, run_id: Any,
                    after: int | None) -> tuple[int, str, Any]:
    """What the events view does to open a stream for `Authorization: Bearer raw`: the
    API's authentication and throttles (kionga.api_request), then runs.stream_open's
    one read. (user ID, run ID, opening), or the APIException the view answers."""
    from django.test import RequestFactory

    from kionga import api_request
    from runs import stream_open

    request = RequestFactory().get("/", HTTP_AUTHORIZATION=f"Bearer {raw}")
    user = api_request.authenticate(request)
    found, opening = stream_open.open_run(user, design_id, run_id, after)
    return user.pk, found, opening


def start_with_token(raw: str, design_id: Any, body: dict[str, Any] | None = None) -> Any:
    """POST …/runs with `Authorization: Bearer raw` through the API: its answer."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client.post(f"/api/v1/agent-designs/{design_id}/runs", body or {"input": "hello"},
                       format="json")


def running_events_url(owner: Any, project: Any) -> str:
    """The events path of a run of a new design of `owner` in `project`, stored as
    running: nothing ends it, so its stream stays open until its client leaves."""
    design = make_design(owner, project)
    run = Run.objects.create(project=project, design=design, status="running",
                             content_sha256="0" * 64, created_by=owner)
    return f"/api/v1/agent-designs/{design.pk}/runs/{run.pk}/events"
