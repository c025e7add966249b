"""Event streams per user and per gateway process are capped, so one viewer's streams
cannot take the connections another tenant's live stream needs. Over the real public
listener (uvicorn serving kionga.asgi, as the Procfile starts it)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.redis_client import async_pool_size, sync_redis
from kionga.tokens import issue_token
from runner import protocol
from runs.event_keys import live_fields
from runs.models import Run
from tests.designs_helpers import make_design
from tests.public_gateway import public_gateway

# Committed data: the gateway is another process with its own connection.
pytestmark = pytest.mark.django_db(transaction=True)

PER_USER, IN_ALL = 3, 4
SSE = {"Accept": "text/event-stream"}


@pytest.fixture(scope="module")
def gateway(django_db_setup: None) -> Iterator[str]:
    with public_gateway(KIONGA_MAX_STREAMS_PER_USER=str(PER_USER),
                        KIONGA_MAX_STREAMS=str(IN_ALL)) as base:
        yield base


def wait_for(check: Callable[[], Any], seconds: float = 30.0) -> Any:
    deadline = time.monotonic() + seconds
    while not (result := check()):
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(0.05)
    return result


class Viewer:
    """Someone following the run's events: a real HTTP client with their token."""

    def __init__(self, base: str, user: User, url: str, streams: ExitStack) -> None:
        token = issue_token(user, "sse")
        self.client = streams.enter_context(httpx.Client(
            base_url=base, timeout=20.0, headers={"Authorization": f"Bearer {token}"}))
        self.url = url
        self.open: list[httpx.Response] = []
        self.lines: dict[int, Iterator[str]] = {}

    def follow(self) -> httpx.Response:
        response = self.client.send(self.client.build_request("GET", self.url, headers=SSE),
                                    stream=True)
        if response.status_code == 200:
            lines = self.lines[id(response)] = response.iter_lines()
            assert next(lines).startswith("retry:")  # the stream is being served
            self.open.append(response)
        else:
            response.read()
        return response

    def read_until(self, response: httpx.Response, prefix: str) -> list[str]:
        seen = []
        for line in self.lines[id(response)]:
            seen.append(line)
            if line.startswith(prefix):
                break
        return seen


def test_it_caps_streams_per_user_and_in_all(gateway: str, alice: User, bob: User,
                                             carol: User, acme: Project) -> None:
    design = make_design(alice, acme)
    run = Run.objects.create(project=acme, design=design, status="running",
                             content_sha256="0" * 64, created_by=carol)
    url = f"/api/v1/agent-designs/{design.pk}/runs/{run.pk}/events"
    with ExitStack() as streams:
        greedy = Viewer(gateway, bob, url, streams)
        assert [greedy.follow().status_code for _ in range(PER_USER)] == [200] * PER_USER
        refused = greedy.follow()
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "too_many_streams"
        assert refused.json()["error"]["details"] == {"max_streams_per_user": PER_USER}
        # Another person still follows the run live.
        other = Viewer(gateway, carol, url, streams)
        live = other.follow()
        assert live.status_code == 200
        event = {"seq": 0, "type": "run.started", "at": protocol.now_iso()}
        sync_redis().xadd(protocol.run_stream(str(run.pk)),
                          live_fields(str(run.pk), json.dumps(event).encode()))
        assert "event: run.started" in other.read_until(live, "data:")
        # The process's budget is spent: 503 for anyone else, until a stream closes.
        third = Viewer(gateway, alice, url, streams)
        full = third.follow()
        assert full.status_code == 503 and full.json()["error"]["code"] == "streams_at_capacity"
        greedy.open.pop().close()
        wait_for(lambda: third.follow().status_code == 200)
        for response in greedy.open + other.open + third.open:
            response.close()
    sync_redis().delete(protocol.run_stream(str(run.pk)))


def test_the_stream_pool_has_room_for_every_stream() -> None:
    assert async_pool_size() > settings.KIONGA_MAX_STREAMS
