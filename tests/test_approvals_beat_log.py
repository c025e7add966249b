"""The beat worker's log: the approval expiry sweep (every second) and the evaluations'
sweep (every five) log nothing when they change nothing — no "Sending due task",
"received" or "succeeded" line of Celery's for them — and the expiry sweep logs one line
when it expired something. Started as the Procfile's `beat` process, on its own Redis."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.db import connection

from approvals.models import ApprovalRequest
from kionga.log_filters import QuietTasks
from kionga.models import Project
from tests.approvals_helpers import pending, waiting_run
from tests.docker_kit import ROOT, procfile
from tests.stack import free_port

pytestmark = pytest.mark.django_db(transaction=True)

SWEEPS = ("approvals.expire_overdue", "evaluations.sweep")


def _database_url() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def _start(command: list[str], log: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("ab"),
                            stderr=subprocess.STDOUT, start_new_session=True)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture
def beat_log(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], Path]]:
    """The Procfile's beat command (its schedule file in tmp_path), on a Redis of its own
    so no other test's queue or flush meets it; yields the process and its log."""
    redis_port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env.update(DATABASE_URL=_database_url(), REDIS_URL=f"redis://127.0.0.1:{redis_port}/0",
               PYTHONUNBUFFERED="1", KIONGA_LOG_LEVEL="INFO")
    redis = _start(["redis-server", "--port", str(redis_port), "--bind", "127.0.0.1",
                    "--save", "", "--appendonly", "no"], tmp_path / "redis.log", env)
    command = procfile()["beat"].replace("var/celerybeat-schedule",
                                         str(tmp_path / "celerybeat-schedule"))
    log = tmp_path / "beat.log"
    beat = _start(["bash", "-c", "exec " + command], log, env)
    try:
        yield beat, log
    finally:
        _stop(beat)
        _stop(redis)


def _until_expired(approval: ApprovalRequest, beat: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while ApprovalRequest.objects.get(pk=approval.pk).status != "expired":
        assert beat.poll() is None, log.read_text(errors="replace")[-3000:]
        assert time.monotonic() < deadline, log.read_text(errors="replace")[-3000:]
        time.sleep(0.1)


def test_the_beat_worker_logs_a_sweep_only_when_it_expired_something(
        alice: User, acme: Project, beat_log: tuple[subprocess.Popen[bytes], Path]) -> None:
    beat, log = beat_log
    overdue = pending(waiting_run(alice, acme), seconds=-1)
    _until_expired(overdue, beat, log)
    time.sleep(5)  # several expiry sweeps and an evaluations' sweep with nothing to do
    _stop(beat)
    # Log records only: the start banner lists the registered tasks.
    lines = [line for line in log.read_text(errors="replace").splitlines()
             if line.startswith("[")]
    assert any("ready." in line for line in lines), lines  # the worker's own lines stay
    assert [line for line in lines if any(task in line for task in SWEEPS)] == []
    expired = [line for line in lines if "expired" in line.lower()]
    assert len(expired) == 1 and "Expired 1 overdue approval request" in expired[0], lines


def test_the_filter_keeps_warnings_and_other_tasks() -> None:
    quiet = QuietTasks(tasks=SWEEPS)

    def record(level: int, name: str) -> logging.LogRecord:
        data = {"id": "1", "name": name}
        made = logging.LogRecord("celery.app.trace", level, __file__, 1, "Task %(name)s",
                                 (data,), None)
        made.data = data
        return made

    assert not quiet.filter(record(logging.INFO, "approvals.expire_overdue"))
    assert quiet.filter(record(logging.ERROR, "approvals.expire_overdue"))
    assert quiet.filter(record(logging.INFO, "runs.prune_runs"))
    beat = logging.LogRecord("celery.beat", logging.INFO, __file__, 1,
                             "Scheduler: Sending due task %s (%s)",
                             ("expire-approvals", "approvals.expire_overdue"), None)
    assert not quiet.filter(beat)
