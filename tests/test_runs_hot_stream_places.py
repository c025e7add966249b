"""A hot stream gives its place in the stream budget back however it ends, even when
the client is gone before the first byte (runs.hot.asgi)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.tokens import create_token
from runs.hot import asgi
from runs.models import Run
from runs.stream_limits import BUDGET
from tests.designs_helpers import make_design

pytestmark = pytest.mark.django_db(transaction=True)


def _follow(path: str, token: str) -> None:
    scope = {"type": "http", "method": "GET", "path": path, "query_string": b"",
             "headers": [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {token}".encode()),
                         (b"accept", b"text/event-stream")]}

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(3600)
        return {"type": "http.disconnect"}

    async def gone(message: Any) -> None:
        raise OSError("the client went away")

    async def django(*args: Any) -> None:
        raise AssertionError("a hot request")

    asyncio.run(asgi.follow_run(scope, receive, gone, django))


def test_a_stream_whose_client_left_first_gives_its_place_back(
        alice: User, acme: Project, settings: Any) -> None:
    settings.KIONGA_MAX_STREAMS_PER_USER = 1
    design = make_design(alice, acme)
    run = Run.objects.create(project=acme, design=design, revision=1,
                             content_sha256="x" * 64, created_by=alice, status="completed")
    raw = create_token(alice, "cli")[1]
    path = f"/api/v1/agent-designs/{design.pk}/runs/{run.pk}/events"
    for _ in range(3):  # with one place, each would be refused if the last one leaked
        with pytest.raises(OSError):
            _follow(path, raw)
    BUDGET.open(alice.pk)()  # the place is free
