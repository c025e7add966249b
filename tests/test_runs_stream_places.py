"""An event stream gives its place in the stream budget back however it ends, even
when the client is gone before the first byte (runs.views, served by kionga.asgi)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga import asgi
from kionga.models import Project
from kionga.tokens import create_token
from runs.models import Run
from runs.stream_limits import BUDGET
from tests.designs_helpers import make_design

pytestmark = pytest.mark.django_db(transaction=True)


def _follow(path: str, token: str) -> None:
    scope = {"type": "http", "method": "GET", "path": path, "query_string": b"",
             "http_version": "1.1", "scheme": "http", "server": ("127.0.0.1", 80),
             "client": ("127.0.0.1", 5000), "root_path": "",
             "headers": [(b"host", b"127.0.0.1"), (b"authorization", f"Bearer {token}".encode()),
                         (b"accept", b"text/event-stream")]}

    asked = []

    async def receive() -> dict[str, Any]:
        asked.append(1)
        if len(asked) == 1:  # the (empty) body, then the client is gone
            return {"type": "http.request", "body": b"", "more_body": False}
        return {"type": "http.disconnect"}

    async def gone(message: Any) -> None:
        pass  # as uvicorn: what is sent to a client that left goes nowhere

    asyncio.run(asgi.application(scope, receive, gone))


def test_a_stream_whose_client_left_first_gives_its_place_back(
        alice: User, acme: Project, settings: Any) -> None:
    settings.KIONGA_MAX_STREAMS_PER_USER = 1
    design = make_design(alice, acme)
    run = Run.objects.create(project=acme, design=design, revision=1,
                             content_sha256="x" * 64, created_by=alice, status="completed")
    raw = create_token(alice, "cli")[1]
    path = f"/api/v1/agent-designs/{design.pk}/runs/{run.pk}/events"
    for _ in range(3):  # with one place, each would be refused if the last one leaked
        _follow(path, raw)
    BUDGET.open(alice.pk)()  # the place is free
