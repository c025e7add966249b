"""Per-request CPU of a run's three requests through kionga.asgi in-process (not a
test, not collected: run it by name). The JSON start, the streamed start (to its first
chunk, then the client leaves) and an event stream's opening: CPU of the whole process
(every thread) per request; function calls per request of every thread the requests
run in, on each thread's CPU time; with PROF_TOP=N the top functions by own time
(PROF_SORT=cumulative: by time with callees), PROF_CALLERS=name the callers of the
functions matching it; with PROF_OFF=1 the CPU alone, without cProfile's own cost.

    PROF_OFF=1 PROF_N=100 .venv/bin/pytest -q -s -p no:randomly tests/prof_requests.py
"""
from __future__ import annotations

import asyncio
import cProfile
import os
import pstats
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from kionga.tokens import issue_token
from runs.models import Run
from tests.designs_helpers import make_design
from tests.runs_helpers import _clear, start_url

pytestmark = pytest.mark.django_db(transaction=True)
N = int(os.environ.get("PROF_N", "100"))


def scope_for(method: str, path: str, headers: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": method, "scheme": "http", "path": path, "raw_path": path.encode(),
            "query_string": b"", "root_path": "", "headers": headers,
            "client": ("127.0.0.1", 5000), "server": ("127.0.0.1", 8000)}


async def call(app: Any, scope: dict[str, Any], body: bytes) -> tuple[int, bytes]:
    sent = False
    status = 0
    chunks: list[bytes] = []

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await first.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if message.get("body"):
                first.set()

    first = asyncio.Event()
    await asyncio.wait_for(app(scope, receive, send), 60)
    return status, b"".join(chunks)


_SAVED: dict[str, ThreadPoolExecutor] = {}


def _one_thread_executors() -> list[ThreadPoolExecutor]:
    """kionga.wsgi_hop's and kionga.pooled's executors replaced by one thread each."""
    from kionga import asgi, pooled
    _SAVED.update(requests=asgi.requests.executor, pooled=pooled._THREADS)
    asgi.requests.executor = ThreadPoolExecutor(max_workers=1)
    pooled._THREADS = ThreadPoolExecutor(max_workers=1)  # type: ignore[misc]
    return [asgi.requests.executor, pooled._THREADS]


def _restore_executors() -> None:
    from kionga import asgi, pooled
    asgi.requests.executor = _SAVED["requests"]
    pooled._THREADS = _SAVED["pooled"]  # type: ignore[misc]


def test_profile(alice: Any, acme: Any, runner_configured: Any, rds: Any) -> None:
    from kionga.asgi import application
    design = make_design(alice, acme)
    token = issue_token(alice, name="prof")
    auth = (b"authorization", f"Bearer {token}".encode())
    host = (b"host", b"localhost")
    json_h = [host, auth, (b"content-type", b"application/json"),
              (b"accept", b"application/json")]
    sse_h = [host, auth, (b"content-type", b"application/json"),
             (b"accept", b"text/event-stream")]
    body = b'{"input": "hello"}'

    async def main() -> None:
        first = scope_for("POST", start_url(design), json_h)
        status, content = await call(application, first, body)
        assert status == 201, content
        import json as _j
        run_id = _j.loads(content)["id"]
        await sync_to_async(lambda: Run.objects.filter(pk=run_id).update(status="completed"))()
        events = scope_for("GET", f"{start_url(design)}/{run_id}/events",
                           [host, auth, (b"accept", b"text/event-stream")])
        status, content = await call(application, events, b"")
        print("events warm", status, content[:200])
        cases = [("json_start", scope_for("POST", start_url(design), json_h), body),
                 ("sse_start", scope_for("POST", start_url(design), sse_h), body),
                 ("events_open", events, b"")]
        for name, scope, payload in cases:
            profiled = not os.environ.get("PROF_OFF")  # CPU alone, without cProfile's own
            # One profile per thread a request runs in: the event loop's, asgiref's
            # thread (Django's signals), and one-thread stand-ins for the executors of
            # kionga.wsgi_hop and kionga.pooled, so each profile sees its thread's work.
            threads = _one_thread_executors() if profiled else []
            for _ in range(5):  # warm (the threads too)
                _clear(rds)
                await call(application, scope, payload)
            cpu = 0.0
            statuses: set[int] = set()
            # Each thread's own CPU time, not wall time: on a busy machine wall time counts
            # the moments other processes had the core.
            profiles = [cProfile.Profile(time.thread_time) for _ in range(len(threads) + 2)]
            if profiled:
                await sync_to_async(profiles[1].enable)()
                for executor, profile in zip(threads, profiles[2:], strict=True):
                    executor.submit(profile.enable).result()
            for _ in range(N):
                _clear(rds)
                t0 = time.process_time()
                if profiled:
                    profiles[0].enable()
                status, _c = await call(application, scope, payload)
                if profiled:
                    profiles[0].disable()
                cpu += time.process_time() - t0
                statuses.add(status)
            if not profiled:
                print(f"\n{name}: statuses={statuses} cpu_ms/req={cpu / N * 1000:.2f}")
                continue
            await sync_to_async(profiles[1].disable)()
            for executor, profile in zip(threads, profiles[2:], strict=True):
                executor.submit(profile.disable).result()
            _restore_executors()
            stats = pstats.Stats(profiles[0])
            for profile in profiles[1:]:
                stats.add(profile)
            calls = stats.total_calls  # type: ignore[attr-defined]
            print(f"\n{name}: statuses={statuses} cpu_ms/req={cpu / N * 1000:.2f} "
                  f"calls/req={calls / N:.0f}")
            if os.environ.get("PROF_TOP"):
                stats.sort_stats(os.environ.get("PROF_SORT", "tottime")).print_stats(
                    int(os.environ["PROF_TOP"]))
            if os.environ.get("PROF_CALLERS"):  # who calls the functions matching this
                stats.print_callers(os.environ["PROF_CALLERS"])

    asyncio.run(main())
