"""One real runner worker for the session (Redis db 5, mock model), and clients.

Tests that kill or misconfigure a worker start their own (runner_kit.Worker).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis
from celery import Celery

from runner import protocol
from runner.settings import RunnerSettings, load_settings
from runner.sink import sink_client
from runner.worker import close_listener_session
from tests.runner_process.runner_kit import REDIS_URL, TOKEN, Worker, client_app


@pytest.fixture(scope="session")
def rds() -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(REDIS_URL)
    # Not flushed: another session may be using db 5 right now. Keys of runs expire
    # (streams, claims) or are leases; only the ingest stream, read by no gateway
    # here, would grow, so it is trimmed.
    client.xtrim(protocol.INGEST_STREAM, maxlen=50_000, approximate=True)
    yield client
    client.close()


@pytest.fixture(scope="session", autouse=True)
def listener_session_closed() -> Iterator[None]:
    """Runs made in this process (runner.worker.execute) share its host's session to the
    listener: closed at the end, as when a pool process exits, not left to the exit."""
    yield
    close_listener_session()


@pytest.fixture(scope="session")
def runner_worker(rds: redis.Redis, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worker]:
    worker = Worker(Path(tmp_path_factory.mktemp("runner")) / "worker.log")
    try:
        worker.wait_ready()
        yield worker
    finally:
        worker.stop()


@pytest.fixture(scope="session")
def celery_client() -> Iterator[Celery]:
    app = client_app()
    yield app
    app.close()


@pytest.fixture
def runner_settings() -> RunnerSettings:
    """The runner's settings for tests that call runner.worker.execute in-process."""
    return load_settings({"KIONGA_DESIGNER_RUNNER_TOKEN": TOKEN, "REDIS_URL": REDIS_URL})


@pytest.fixture
def sink_redis(rds: redis.Redis) -> Iterator[redis.Redis]:
    """A client configured as the runner's (no retries of its own)."""
    conn = sink_client(REDIS_URL)
    yield conn
    conn.close()
