"""PostgreSQL away: every listener answers 503 service_unavailable fast, and recovers.

A private stack (gateway, internal listener, events) reaches the test database through
a loopback proxy (tests/cuttable_proxy.py) that the test cuts as a stopped server
would: connections dropped, new ones refused. While it is cut, the API (a run start
with and without an Idempotency-Key among its routes), the internal listener, the
admin, an HTML page and /healthz answer 503 within KIONGA_DB_CONNECT_TIMEOUT and a
little, with Retry-After: JSON in the error shape, HTML for pages. An open event
stream ends cleanly; a new one is refused. Restored, everything answers as before, no
process restarted; the ingester kept running and stores what arrived meanwhile.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest
import redis
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from kionga import database
from runner import protocol
from runs.credentials import issue_credential
from runs.event_keys import live_fields
from runs.models import Run, RunEvent
from tests.conftest import Api
from tests.cuttable_proxy import CuttableProxy
from tests.designs_helpers import make_design
from tests.ingest_helpers import events, fields, make_run
from tests.stack import Stack

# Committed data: the stack's processes read it with their own connections.
pytestmark = pytest.mark.django_db(transaction=True)

CONNECT_TIMEOUT = 2  # the stack's KIONGA_DB_CONNECT_TIMEOUT
# A 503 comes within the connect timeout; the rest is slack for a busy machine.
ANSWER_BOUND = CONNECT_TIMEOUT + 3.0
STORING_NONE = "no run events are being stored"  # the ingester's outage log line


@pytest.fixture(scope="module")
def proxy(django_db_setup: Any, django_db_blocker: Any) -> Iterator[CuttableProxy]:
    db = connection.settings_dict
    running = CuttableProxy(db["HOST"] or "127.0.0.1", int(db["PORT"] or 5432)).start()
    yield running
    running.stop()


@pytest.fixture(scope="module")
def stack(proxy: CuttableProxy, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db.get("PASSWORD") else "")
    running = Stack(database_url=f"postgres://{auth}@127.0.0.1:{proxy.port}/{db['NAME']}",
                    max_runs=100, only=("gateway", "internal", "events"),
                    extra_env={"KIONGA_DB_CONNECT_TIMEOUT": str(CONNECT_TIMEOUT)},
                    log_dir=tmp_path_factory.mktemp("database-away-logs")).start()
    yield running
    running.stop()


@pytest.fixture
def postgres(proxy: CuttableProxy, stack: Stack) -> Iterator[CuttableProxy]:
    """The stack's way to the database, to cut; restored after the test whatever happens."""
    yield proxy
    proxy.restore()


Probe = Callable[[], httpx.Response]


def gateway(stack: Stack, headers: dict[str, str] | None = None,
            cookies: dict[str, str] | None = None) -> httpx.Client:
    return httpx.Client(base_url=stack.base_url, timeout=30.0, headers=headers,
                        cookies=cookies)


def session_cookie(user: User) -> dict[str, str]:
    client = Client()
    client.force_login(user)
    return {"sessionid": client.cookies["sessionid"].value}


def ask_all(probes: dict[str, Probe]) -> dict[str, tuple[httpx.Response, float]]:
    """Every probe at once: (answer, seconds it took)."""
    def timed(probe: Probe) -> tuple[httpx.Response, float]:
        began = time.monotonic()
        return probe(), time.monotonic() - began

    with ThreadPoolExecutor(len(probes)) as pool:
        futures = {name: pool.submit(timed, probe) for name, probe in probes.items()}
        return {name: future.result() for name, future in futures.items()}


def eventually(predicate: Callable[[], bool], timeout: float, message: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, message
        time.sleep(0.2)


def statuses(probes: dict[str, Probe]) -> dict[str, int]:
    return {name: response.status_code for name, (response, _s) in ask_all(probes).items()}


def assert_unavailable_json(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["content-type"].startswith("application/json"), response.headers
    assert response.json() == {"error": {"code": "service_unavailable",
                                         "message": database.MESSAGE, "details": {}}}
    assert response.headers["retry-after"] == str(database.RETRY_AFTER_SECONDS)


def assert_unavailable_html(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    assert response.headers["content-type"].startswith("text/html"), response.headers
    assert database.MESSAGE in response.text
    assert response.headers["retry-after"] == str(database.RETRY_AFTER_SECONDS)


def test_every_listener_answers_503_while_the_database_is_away(
        stack: Stack, postgres: CuttableProxy, api: Api, alice: User, acme: Any,
        staff: Client) -> None:
    design = make_design(alice, acme)
    runs_url = f"/api/v1/agent-designs/{design.pk}/runs"
    public = gateway(stack, {"Authorization": f"Bearer {api.token_for(alice)}"})
    run = Run.objects.create(project=acme, design=design, created_by=alice, status="running",
                             content_sha256="0" * 64, resources={"knowledge_base": []})
    protocol.acquire_slot(redis.Redis.from_url(stack.redis_url), str(run.pk), 100, 3600.0)
    internal = httpx.Client(base_url=f"http://127.0.0.1:{stack.internal_port}", timeout=30.0,
                            headers={"Authorization": f"Bearer {issue_credential(run)}"})
    ops = gateway(stack, cookies={"sessionid": staff.cookies["sessionid"].value})
    approver = gateway(stack, cookies=session_cookie(alice))
    keys = iter(range(1000))

    json_probes: dict[str, Probe] = {
        "api": lambda: public.get("/api/v1/me"),
        "start": lambda: public.post(runs_url, json={"input": "x"}),
        "keyed start": lambda: public.post(runs_url, json={"input": "x"},
                                            headers={"Idempotency-Key": f"k-{next(keys)}"}),
        "internal": lambda: internal.get("/api/v1/knowledge-bases"),
        "internal healthz": lambda: internal.get("/healthz"),
        "healthz": lambda: public.get("/healthz"),
    }
    html_probes: dict[str, Probe] = {
        "admin": lambda: ops.get("/admin/"),
        "approvals page": lambda: approver.get("/approvals/"),
    }
    normal = {"api": 200, "start": 201, "keyed start": 201, "internal": 200,
              "internal healthz": 200, "healthz": 200, "admin": 200, "approvals page": 200}
    probes = {**json_probes, **html_probes}
    assert statuses(probes) == normal

    postgres.cut()
    for name, (response, seconds) in ask_all(probes).items():
        assert seconds < ANSWER_BOUND, (name, seconds)
        (assert_unavailable_json if name in json_probes else assert_unavailable_html)(response)

    postgres.restore()
    # Back without a restart of any process.
    eventually(lambda: statuses(probes) == normal, 10, "the stack did not recover")
    stack.assert_alive()


def test_an_open_stream_ends_cleanly_and_a_new_one_is_refused(
        stack: Stack, postgres: CuttableProxy, api: Api, alice: User, acme: Any) -> None:
    design = make_design(alice, acme)
    run = Run.objects.create(project=acme, design=design, created_by=alice, status="running",
                             content_sha256="0" * 64)
    url = f"/api/v1/agent-designs/{design.pk}/runs/{run.pk}/events"
    follow = {"Accept": "text/event-stream"}
    follower = gateway(stack, {"Authorization": f"Bearer {api.token_for(alice)}", **follow})
    canvas = gateway(stack, follow, cookies=session_cookie(alice))  # Django's own stream view

    def stream_status(client: httpx.Client) -> int:
        with client.stream("GET", url) as response:
            return response.status_code

    with follower.stream("GET", url) as response:
        assert response.status_code == 200
        lines = response.iter_lines()
        assert next(lines) == "retry: 2000"
        postgres.cut()
        # A live event after a gap: the stream looks for the missing ones in the database.
        [event] = events("node.started")
        redis.Redis.from_url(stack.redis_url).xadd(  # with the run's MAC, as a runner writes it
            protocol.run_stream(str(run.pk)),
            live_fields(str(run.pk), json.dumps({**event, "seq": 3}).encode()))
        began = time.monotonic()
        rest = list(lines)  # to the end of the answer: a cut stream would raise here
    assert time.monotonic() - began < ANSWER_BOUND
    assert rest == ["", ": database unavailable", ""]

    for client in (follower, canvas):
        began = time.monotonic()
        assert_unavailable_json(client.get(url))
        assert time.monotonic() - began < ANSWER_BOUND

    postgres.restore()
    eventually(lambda: stream_status(follower) == stream_status(canvas) == 200, 10,
               "streams did not open again")


def test_the_ingester_keeps_running_and_stores_what_came_meanwhile(
        stack: Stack, postgres: CuttableProxy, alice: User, acme: Any) -> None:
    run = make_run(alice, acme, status="running")
    log = stack.log_dir / "events.log"

    def recovered() -> bool:  # from the other tests' outages: its backoff starts anew
        text = log.read_text()
        return text.rfind(STORING_NONE) <= text.rfind("database available again")

    eventually(recovered, 15, "the ingester did not recover from an earlier outage")
    seen = len(log.read_text())

    def logged() -> str:
        return log.read_text()[seen:]

    postgres.cut()
    [event] = events("node.started")
    redis.Redis.from_url(stack.redis_url).xadd(protocol.INGEST_STREAM, fields(str(run.pk), event))
    # Loud, and each try waits longer than the last.
    eventually(lambda: "retrying in 1.0 s" in logged(), 15, "no backoff in the events log")
    delays = re.findall(STORING_NONE + r"; retrying in ([0-9.]+) s", logged())
    assert delays[:2] == ["0.5", "1.0"], logged()
    assert not RunEvent.objects.filter(run=run).exists()

    postgres.restore()
    eventually(lambda: RunEvent.objects.filter(run=run).exists(), 15, "the event was not stored")
    # Said once the iteration that stored it ends.
    eventually(lambda: "database available again" in logged(), 5, "no recovery in the log")
    stack.assert_alive()
