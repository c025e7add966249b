"""The live stack for end-to-end tests: started once for this package, on the test
database. Package scope, not session: the stack's `events` process reaps the runs of
the test database whose slot lease is gone from ITS Redis, so it must be stopped before
the tests outside tests/e2e/ that make runs with leases in the tests' Redis."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.otlp_receiver import receiver  # noqa: F401 (fixture)
from tests.sse_frames import frames as frames_of
from tests.stack import Stack

# The stack's internal listener gives up on a function, API connection or MCP tool after
# this many seconds (KIONGA_CALL_TIMEOUT_SECONDS, below the product's default): a hanging
# server fails its node that soon. The peers here answer on loopback well within it.
CALL_TIMEOUT_SECONDS = 5


@pytest.fixture(scope="package")
def stack(django_db_setup: Any, django_db_blocker: Any) -> Iterator[Stack]:
    from django.db import connection

    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    url = f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"
    # Streams re-check their access every second: tests see a revocation end one soon.
    # Its gateway checks the passwords of the people made here with the suite's hasher.
    running = Stack(database_url=url, stream_recheck_seconds=1,
                    settings_module="tests.stack_settings",
                    extra_env={"KIONGA_CALL_TIMEOUT_SECONDS": str(CALL_TIMEOUT_SECONDS)}).start()
    yield running
    running.stop()


Frame = tuple[str, dict[str, Any]]


@pytest.fixture(autouse=True)
def settled_runs(transactional_db: None, stack: Stack) -> Iterator[None]:
    """After each test, end the runs it left active and wait until they are stored as
    ended, so the database flush never races the stack's processes."""
    yield
    from kionga.tokens import issue_token
    from runs.models import ACTIVE_STATUSES, Run

    deadline = time.monotonic() + 30
    for run in Run.objects.filter(status__in=ACTIVE_STATUSES).select_related("created_by"):
        if run.created_by is not None:  # through the stack's API: it owns the Redis
            http = Http(stack, issue_token(run.created_by, "settle"))
            http.client.post(f"/api/v1/agent-designs/{run.design_id}/runs/{run.pk}/cancel")
    while Run.objects.filter(status__in=ACTIVE_STATUSES).exists():
        assert time.monotonic() < deadline, "runs did not settle"
        time.sleep(0.05)


class Http:
    """A real HTTP client of the running gateway, as one user."""

    def __init__(self, stack: Stack, token: str) -> None:
        self.stack = stack
        self.client = httpx.Client(base_url=stack.base_url, timeout=30.0,
                                   headers={"Authorization": f"Bearer {token}"})

    def create_design(self, project_id: int, graph: dict[str, Any], name: str = "E2E") -> str:
        response = self.client.post("/api/v1/agent-designs",
                                    json={"project_id": project_id, "name": name, "graph": graph})
        assert response.status_code == 201, response.text
        return str(response.json()["id"])

    def start(self, design_id: str, **body: Any) -> httpx.Response:
        return self.client.post(f"/api/v1/agent-designs/{design_id}/runs", json=body)

    def sse(self, design_id: str, run_id: str, last_event_id: int | None = None,
            stop_after: int | None = None, on_event: Any = None) -> list[Frame]:
        """Read SSE frames until the stream ends (or `stop_after` stored events)."""
        headers = {"Accept": "text/event-stream"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = str(last_event_id)
        frames: list[Frame] = []
        url = f"/api/v1/agent-designs/{design_id}/runs/{run_id}/events"
        with self.client.stream("GET", url, headers=headers, timeout=60.0) as response:
            assert response.status_code == 200, response.read()
            assert response.headers["content-type"].startswith("text/event-stream")
            for kind, data, has_id in frames_of(response.iter_lines()):
                frames.append((kind, data))
                assert has_id == (kind != "delta"), (kind, data)
                if on_event is not None:
                    on_event(kind, data)
                stored = [f for f in frames if f[0] != "delta"]
                if stop_after is not None and len(stored) >= stop_after:
                    break
        return frames

    def run(self, design_id: str, run_id: str) -> dict[str, Any]:
        response = self.client.get(f"/api/v1/agent-designs/{design_id}/runs/{run_id}")
        assert response.status_code == 200, response.text
        return dict(response.json())


