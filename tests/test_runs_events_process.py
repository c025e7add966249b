"""The real `manage.py run_events` process: started after a predecessor died holding
entries, with a poisoned entry among good ones, it stores everything storable, fails
the poisoned run, and keeps running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from django.conf import settings

from runner import protocol
from runs.models import Run
from tests.ingest_helpers import dead_letters, events, fields, make_run, send, seqs

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parent.parent
COMPLETE = ("run.started", "node.started", "node.completed", "run.completed")


def _database_url() -> str:
    from django.db import connection

    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def ingester(tmp_path: Path) -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    # The same secret as this test process: the events are signed with its run keys.
    env.update(DATABASE_URL=_database_url(), REDIS_URL=settings.REDIS_URL,
               DJANGO_SECRET_KEY=settings.SECRET_KEY, PYTHONUNBUFFERED="1")

    def start() -> subprocess.Popen[bytes]:
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


def _until(check: Callable[[], bool], process: subprocess.Popen[bytes], seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert process.poll() is None, "run_events exited"
        assert time.monotonic() < deadline, "not in time"
        time.sleep(0.05)


def _status(run: Run) -> str:
    return Run.objects.values_list("status", flat=True).get(pk=run.pk)


def test_it_recovers_a_dead_ingesters_entries_and_survives_poison(
        alice: Any, acme: Any, stream: redis.Redis,
        ingester: Callable[[], subprocess.Popen[bytes]]) -> None:
    held, poisoned, plain = (make_run(alice, acme) for _ in range(3))
    sent = events(*COMPLETE)
    send(stream, held, sent)
    # The predecessor read these and was killed before acknowledging them.
    stream.xreadgroup(protocol.INGEST_GROUP, "killed-ingester", {protocol.INGEST_STREAM: ">"})
    send(stream, poisoned, sent[:1])
    # U+0000 as a JSON escape: valid JSON that PostgreSQL refuses (jsonb).
    nul = json.dumps({**sent[1], "node_id": "a\x00"}).encode()
    stream.xadd(protocol.INGEST_STREAM, fields(str(poisoned.pk), nul))
    send(stream, plain, sent)
    process = ingester()
    _until(lambda: _status(held) == "completed" and _status(plain) == "completed"
           and _status(poisoned) == "failed", process, 30)
    assert seqs(held) == seqs(plain) == [0, 1, 2, 3]
    assert seqs(poisoned) == [0, 1]
    later = make_run(alice, acme)
    send(stream, later, sent)
    _until(lambda: _status(later) == "completed", process, 30)
    _until(lambda: stream.xlen(protocol.INGEST_STREAM) == 0, process, 30)  # trimmed
    [letter] = dead_letters(stream)
    assert letter[b"reason"] == b"refused_by_database"
