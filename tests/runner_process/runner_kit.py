"""Helpers for the runner-process tests: a real Celery worker, signed tasks, event reads.

Not a test module (no test_ prefix). Pure Python: nothing here imports Django.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from celery import Celery

from contracts.hashing import canonical_json
from contracts.normalize import normalize
from runner import protocol, task_signature
from runner.task_seal import seal, unseal
from tests.loopback import QuietHandler, serving

ROOT = Path(__file__).resolve().parents[2]
CELERY = str(ROOT / ".venv/bin/celery")


def _test_redis_url() -> str:
    """The suite's Redis (REDIS_URL, as bin/test sets it), in its db 5 unless
    KIONGA_TEST_RUNNER_REDIS_DB names another: suites run side by side on one machine
    give each its own, since the runner's slot and parked sets are global keys."""
    url = urlsplit(os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0")
    db = os.environ.get("KIONGA_TEST_RUNNER_REDIS_DB", "5")
    return urlunsplit((url.scheme, url.netloc, f"/{int(db)}", "", ""))


REDIS_URL = _test_redis_url()
TOKEN = "runner-test-token-0123456789"
# The event key the gateway would derive for a run; one for every test run here.
EVENT_KEY = bytes(range(32))
TERMINAL = {"run.completed", "run.failed", "run.cancelled"}
# Several test sessions may share Redis db 5 at once (people running the suite side
# by side): each session's workers consume a queue of their own so no worker takes
# another session's tasks. Slots are shared, as in production: tests wait for one.
SESSION_QUEUE = f"{protocol.QUEUE}-test-{uuid.uuid4().hex[:8]}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def worker_env(port: int, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KIONGA_", "MLAIOPS_", "DJANGO_"))}
    env.update({"REDIS_URL": REDIS_URL, "KIONGA_DESIGNER_RUNNER_TOKEN": TOKEN,
                "MLAIOPS_LLM_BACKEND": "mock", "KIONGA_DESIGNER_PORT": str(port),
                "KIONGA_DESIGNER_MAX_RUNS": "8", "PYTHONUNBUFFERED": "1"})
    env.update(extra)
    return env


def worker_command(*extra: str, queue: str = SESSION_QUEUE) -> list[str]:
    return [CELERY, "-A", "runner.celery_app", "worker", "-Q", queue,
            "--loglevel=INFO", "--without-gossip", "--without-mingle", "--without-heartbeat",
            "-n", f"runner-test-{uuid.uuid4().hex[:8]}@%h", *extra]


class Worker:
    """A real `celery -A runner.celery_app worker` subprocess, output in a log file.

    `queue`: a worker that must not share its tasks with the session's (one the test
    kills) consumes a queue of its own.
    """

    def __init__(self, log_path: Path, *extra_args: str, queue: str = SESSION_QUEUE,
                 **env: str) -> None:
        self.port = free_port()
        self.queue = queue
        self.log_path = log_path
        self._log = log_path.open("wb")
        self.proc = subprocess.Popen(
            worker_command(*extra_args, queue=queue), cwd=ROOT, env=worker_env(self.port, **env),
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_ready(self, seconds: float = 30.0) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"worker exited {self.proc.returncode}:\n{self.log()}")
            if http_get(self.port, "/health", TOKEN)[0] == 200:
                return
            time.sleep(0.1)
        raise RuntimeError(f"worker not ready within {seconds} s:\n{self.log()}")

    def children(self) -> list[int]:
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(self.proc.pid)],
                             capture_output=True, text=True, check=False).stdout
        return [int(pid) for pid in out.split()]

    def kill9(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(10)
        self._log.close()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def http_get(port: int, path: str, token: str | None) -> tuple[int, dict[str, Any]]:
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")
    except OSError:
        return 0, {}


def client_app(broker: str = REDIS_URL) -> Celery:
    """A plain Celery client, as the gateway would hold one (no runner code)."""
    app = Celery("runner-test-client", broker=broker)
    app.conf.update(task_serializer="json", accept_content=["json"],
                    broker_connection_retry_on_startup=True)
    return app


def mock_graph() -> dict[str, Any]:
    """input → prompt → model (mock llm) → output, normalized."""
    doc = {
        "schema_version": 2, "name": "mock",
        "nodes": [
            {"id": "input", "kind": "input"},
            {"id": "prompt", "kind": "prompt", "config": {"template": "Answer: {input}"}},
            {"id": "model", "kind": "model", "config": {"model": "llm"}},
            {"id": "output", "kind": "output"},
        ],
        "edges": [{"from": "input", "to": "prompt"}, {"from": "prompt", "to": "model"},
                  {"from": "model", "to": "output"}],
    }
    return normalize(doc).graph


def knowledge_graph() -> dict[str, Any]:
    """input → knowledge (calls the callback URL) → output, normalized."""
    doc = {
        "schema_version": 2, "name": "slow",
        "nodes": [
            {"id": "input", "kind": "input"},
            {"id": "search", "kind": "knowledge", "config": {"knowledge_base": "kb-1"}},
            {"id": "output", "kind": "output"},
        ],
        "edges": [{"from": "input", "to": "search"}, {"from": "search", "to": "output"}],
    }
    return normalize(doc).graph


def payload(graph: dict[str, Any], *, run_id: str | None = None, text: str = "hello there",
            callback_url: str = "http://127.0.0.1:9/api/v1") -> dict[str, Any]:
    run_id = run_id or str(uuid.uuid4())
    secrets = {"credential": f"run-cred-{uuid.uuid4().hex}", "event_key": EVENT_KEY.hex(),
               "lease": protocol.new_lease_token()}
    return {
        "run_id": run_id, "project_id": 1, "graph": graph,
        "input": text, "session_id": None, "history": [], "allow_side_effects": False,
        "stop_after": None, "subflows": {}, "secret_patterns": [],
        "sealed": seal(secrets, TOKEN, run_id), "callback_url": callback_url,
        "issued_at": "2026-11-30T00:00:00+00:00",
    }


def credential_of(body: dict[str, Any]) -> str:
    return unseal(body["sealed"], TOKEN, body["run_id"])["credential"]


def lease_of(body: dict[str, Any]) -> str:
    """The token of the run's slot lease, as the gateway issued it with the slot."""
    return unseal(body["sealed"], TOKEN, body["run_id"])["lease"]


def slot_for(client: redis.Redis, body: dict[str, Any], max_runs: int = 8) -> bool:
    """Take the run's slot under its task's lease token, as the gateway does."""
    return protocol.acquire_slot(client, str(body["run_id"]), max_runs,
                                 token=lease_of(body)) == protocol.SLOT_TAKEN


def send(app: Celery, client: redis.Redis, body: dict[str, Any], *,
         signature: str | None = None, take_slot: bool = True,
         queue: str = SESSION_QUEUE) -> str:
    """Take the run's slot (as the gateway does), then send the signed task: its payload
    as its canonical JSON text, as the gateway sends it (runs/dispatch.py)."""
    run_id = str(body["run_id"])
    if take_slot:
        assert wait_for(lambda: slot_for(client, body), 20), "no free slot"
    text = canonical_json(body)
    sig = signature if signature is not None else task_signature.sign_text(text, TOKEN)
    app.send_task(protocol.TASK_NAME, args=[text, sig], queue=queue)
    return run_id


def read_run(client: redis.Redis, run_id: str, *, seconds: float = 15.0,
             until: Callable[[dict[str, Any]], bool] | None = None) -> list[dict[str, Any]]:
    """The run stream's events, read until the terminal event (or `until`)."""
    stop = until or (lambda event: event["type"] in TERMINAL)
    events: list[dict[str, Any]] = []
    last = "0-0"
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        answer: Any = client.xread({protocol.run_stream(run_id): last}, block=200, count=500)
        for _stream, entries in answer or []:
            for entry_id, fields in entries:
                last = entry_id
                events.append(live_event(fields))
                if stop(events[-1]):
                    return events
    raise AssertionError(f"run {run_id}: no end within {seconds} s; got {events}")


def stream_events(client: redis.Redis, run_id: str) -> list[dict[str, Any]]:
    entries: Any = client.xrange(protocol.run_stream(run_id))
    return [live_event(fields) for _id, fields in entries]


def live_event(fields: dict[bytes, bytes]) -> dict[str, Any]:
    """A live entry's event, or the seq and type of a stored event too large for it."""
    data = fields.get(protocol.LIVE_EVENT_FIELD) or fields[protocol.LIVE_STORED_ONLY_FIELD]
    parsed: dict[str, Any] = json.loads(data)
    return parsed


def ingest_events(client: redis.Redis, run_id: str) -> list[dict[str, Any]]:
    """The run's ingest entries' events; each entry must carry the MAC of the run's
    event key (the gateway stores nothing else). Node record entries are not events."""
    entries: Any = client.xrange(protocol.INGEST_STREAM)
    mine = [fields for _id, fields in entries if fields[b"run"].decode() == run_id
            and protocol.RECORD_FIELD.encode() not in fields]
    for fields in mine:
        assert protocol.event_mac_valid(EVENT_KEY, run_id, fields[b"e"], fields[b"mac"])
    return [json.loads(fields[b"e"]) for fields in mine]


def ingest_records(client: redis.Redis, run_id: str) -> list[dict[str, Any]]:
    """The run's node records in the ingest stream, each with its run's record MAC."""
    entries: Any = client.xrange(protocol.INGEST_STREAM)
    field = protocol.RECORD_FIELD.encode()
    mine = [fields for _id, fields in entries if fields[b"run"].decode() == run_id
            and field in fields]
    for fields in mine:
        assert protocol.record_mac_valid(EVENT_KEY, run_id, fields[field], fields[b"mac"])
    return [json.loads(fields[field]) for fields in mine]


@contextmanager
def slow_gateway(delay: float) -> Iterator[tuple[str, list[str]]]:
    """A loopback 'internal listener' whose knowledge search answers after `delay` s."""
    seen: list[str] = []

    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
            seen.append(self.path)
            self.read_body()
            time.sleep(delay)
            self.answer(200, {"documents": [{"text": "found it"}]})

    with serving(Handler) as url:
        yield f"{url}/api/v1", seen


def wait_for(check: Callable[[], bool], seconds: float, step: float = 0.05) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(step)
    return check()


class RedisServer:
    """A private redis-server whose data survives a restart (AOF, fsync always)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:  # e.g. Redis only as a service container
            pytest.skip("a private redis-server is needed (none on PATH)")
        self.proc = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.folder),
             "--appendonly", "yes", "--appendfsync", "always", "--save", ""],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with redis.Redis(port=self.port) as client:
            assert wait_for(lambda: _pings(client), 10)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


def _pings(client: redis.Redis) -> bool:
    try:
        return bool(client.ping())
    except redis.RedisError:
        return False

