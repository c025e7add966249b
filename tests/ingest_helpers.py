"""Helpers for the ingester tests: runs, signed ingest entries, a clean ingest stream,
and the real `manage.py run_events` process."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings
from django.db import connection
from django.utils import timezone

from kionga.redis_client import sync_redis
from runner import protocol
from runs import ingest, ingest_stream
from runs.event_keys import event_key
from runs.models import Run
from tests.designs_helpers import make_design

AT = "2026-11-30T10:00:00.000+00:00"
ROOT = Path(__file__).resolve().parent.parent
COMPLETE = ("run.started", "node.started", "node.completed", "run.completed")


@pytest.fixture
def stream() -> Iterator[redis.Redis]:
    """The gateway's Redis with an empty ingest stream (and group) and dead-letter stream."""
    client = sync_redis()
    client.delete(protocol.INGEST_STREAM, protocol.DEAD_LETTER_STREAM)
    ingest_stream.ensure_group(client)
    yield client
    client.delete(protocol.INGEST_STREAM, protocol.DEAD_LETTER_STREAM)


def make_run(user: Any, project: Any, design: Any = None, status: str = "queued") -> Run:
    """A run no reaper takes for lost: created "tomorrow", so another events process
    on this test database (the e2e stack's, which cannot see this Redis) leaves it
    alone; tests name the runs they want reaped."""
    run = Run.objects.create(project=project, design=design or make_design(user, project),
                             revision=1, content_sha256="x" * 64, created_by=user,
                             status=status)
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() + timedelta(days=1))
    return run


def events(*kinds: str) -> list[dict[str, Any]]:
    """Events of the given types with seqs 0, 1, ...; a run.completed carries an output."""
    made = []
    for seq, kind in enumerate(kinds):
        event: dict[str, Any] = {"seq": seq, "type": kind, "at": AT}
        if kind == "run.completed":
            event.update(output="done", usage={"tokens": 7})
        if kind == "node.started":
            event.update(node_id="input", attempt=1)
        made.append(event)
    return made


def fields(run_id: str, event: dict[str, Any] | bytes, key: bytes | None = None) -> dict[Any, Any]:
    """An ingest entry's fields as the run's runner writes them (its key unless `key`)."""
    encoded = event if isinstance(event, bytes) else protocol.encode_event(event).encode()
    return protocol.ingest_fields(event_key(run_id) if key is None else key, run_id, encoded)


def entries(run: Run, sent: list[dict[str, Any]]) -> list[ingest.Entry]:
    """Entries as read from the stream (IDs made up), for store_entries."""
    return [(f"{i}-0".encode(), {k.encode(): v if isinstance(v, bytes) else v.encode()
                                 for k, v in fields(str(run.pk), e).items()})
            for i, e in enumerate(sent, 1)]


def send(client: redis.Redis, run: Run | str, sent: list[dict[str, Any]]) -> None:
    run_id = str(run.pk) if isinstance(run, Run) else run
    for event in sent:
        client.xadd(protocol.INGEST_STREAM, fields(run_id, event))


def drain(client: redis.Redis, consumer: str = "test") -> None:
    while ingest.drain_once(client, consumer, block_ms=20):
        pass


def seqs(run: Run) -> list[int]:
    return list(run.events.order_by("seq").values_list("seq", flat=True))


def dead_letters(client: redis.Redis) -> list[dict[bytes, bytes]]:
    letters: Any = client.xrange(protocol.DEAD_LETTER_STREAM)
    return [letter for _id, letter in letters]


def _database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


Ingester = Callable[..., subprocess.Popen[bytes]]


@pytest.fixture
def ingester(tmp_path: Path) -> Iterator[Ingester]:
    """Starts `manage.py run_events` on the test database (and the suite's Redis, or
    `redis_url`); its output goes to tmp_path/events.log; stopped after the test."""
    started: list[subprocess.Popen[bytes]] = []

    def start(redis_url: str = settings.REDIS_URL) -> subprocess.Popen[bytes]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
        # The same secret as this test process: the events are signed with its run keys.
        env.update(DATABASE_URL=_database_url(), REDIS_URL=redis_url,
                   DJANGO_SECRET_KEY=settings.SECRET_KEY, PYTHONUNBUFFERED="1")
        log = (tmp_path / "events.log").open("ab")
        process = subprocess.Popen([sys.executable, "manage.py", "run_events"], cwd=ROOT,
                                   env=env, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(15)


def until(check: Callable[[], bool], process: subprocess.Popen[bytes], seconds: float) -> None:
    """Wait for `check`, failing at once if the ingester exits."""
    deadline = time.monotonic() + seconds
    while not check():
        assert process.poll() is None, "run_events exited"
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.05)


def status(run: Run) -> str:
    return Run.objects.values_list("status", flat=True).get(pk=run.pk)
