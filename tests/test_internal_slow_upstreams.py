"""No tenant's slow upstream stalls another: the real internal listener (uvicorn) with
upstream calls waiting on an OpenAI-compatible peer on loopback (tests/openai_peer)
that drips or answers slowly. Calls in flight cost the listener no thread each, and
/healthz and another project's knowledge search answer at once meanwhile."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.resource_models import KnowledgeBase, KnowledgeDocument, ModelEndpoint
from tests.internal_helpers import start_run
from tests.internal_listener import internal_listener_process
from tests.openai_peer import OpenAIPeer

pytestmark = [pytest.mark.django_db(transaction=True),
              pytest.mark.allow_output]  # the dripping calls are logged as they end

MESSAGES = {"messages": [{"role": "user", "content": "hi"}]}
PROMPT = 2.0  # seconds: what "at once" means on a loaded 2-core test machine
# The listener's model timeout in the dripping test (KIONGA_MODEL_TIMEOUT_SECONDS, below
# the product's default): room for the calls to get in flight and for the two prompt
# answers (2 * PROMPT) before the first call is cut.
CUT_SECONDS = 8


def status_of(pid: int) -> dict[str, int]:
    """Threads and resident memory (kB) of a process, from /proc."""
    fields = dict(line.split(":", 1) for line in
                  Path(f"/proc/{pid}/status").read_text().splitlines() if ":" in line)
    return {"threads": int(fields["Threads"]),
            "rss_kb": int(fields["VmRSS"].split()[0])}


def calls_in_background(base: str, credential: str, count: int) -> Callable[[], list[Any]]:
    """Start `count` concurrent predicts; the returned function waits for their ends
    (200 or the error code, each)."""
    ends: list[Any] = []

    async def all_calls() -> None:
        limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=base + "/", timeout=120, limits=limits,
                                     headers={"Authorization": f"Bearer {credential}"}) as c:
            async def one() -> Any:
                try:
                    answer = await c.post("models/slow/predict", json=MESSAGES)
                    return 200 if answer.status_code == 200 else answer.json()["error"]["code"]
                except httpx.HTTPError as exc:
                    return type(exc).__name__

            ends.extend(await asyncio.gather(*[one() for _ in range(count)]))

    thread = threading.Thread(target=asyncio.run, args=(all_calls(),), daemon=True)
    thread.start()

    def wait() -> list[Any]:
        thread.join(timeout=120)
        return ends

    return wait


def all_in_flight(peer: OpenAIPeer, calls: int, ends: Callable[[], list[Any]]) -> None:
    deadline = time.monotonic() + 30
    while peer.in_flight < calls:
        assert time.monotonic() < deadline, (peer.in_flight, calls, ends())
        time.sleep(0.05)


def timed(call: Callable[[], httpx.Response]) -> tuple[int, float]:
    started = time.monotonic()
    return call().status_code, time.monotonic() - started


# Long enough for all of a test's calls to be in flight before the first one answers.
LATENCY = 6.0


@pytest.fixture
def peer() -> Iterator[OpenAIPeer]:
    with OpenAIPeer(latency=LATENCY, drip_seconds=3.0).serving() as served:
        yield served


def slow_model(project: Project, peer: OpenAIPeer) -> None:
    ModelEndpoint.objects.create(project=project, key="slow", base_url=peer.url,
                                 model_name="m")


def test_a_dripping_upstream_stalls_neither_health_nor_another_project(
    peer: OpenAIPeer, carol: User, acme: Project, mallory: User, evil: Project
) -> None:
    calls = 60  # far more than the listener had threads
    peer.fail(*["drip"] * calls)
    slow_model(acme, peer)
    kb = KnowledgeBase.objects.create(project=evil, key="faq", name="FAQ")
    KnowledgeDocument.objects.create(knowledge_base=kb, title="Refunds", text="Refunds in 14 days.")
    _, dripping = start_run(carol, acme)
    _, other = start_run(mallory, evil)
    with internal_listener_process(KIONGA_MODEL_TIMEOUT_SECONDS=str(CUT_SECONDS)) as (
            base, _process):
        ends = calls_in_background(base, dripping, calls)
        all_in_flight(peer, calls, ends)  # none waits for a worker
        health = timed(lambda: httpx.get(base.removesuffix("/api/v1") + "/healthz", timeout=30))
        search = timed(lambda: httpx.post(
            base + "/knowledge-bases/faq/search", json={"query": "refunds"}, timeout=30,
            headers={"Authorization": f"Bearer {other}"}))
        assert health[0] == 200 and health[1] < PROMPT, health
        assert search[0] == 200 and search[1] < PROMPT, search
        assert peer.in_flight == calls  # still dripping meanwhile
        # A dripping answer is cut at the call's time limit: resource_unavailable.
        assert ends() == ["resource_unavailable"] * calls


def test_calls_in_flight_cost_no_thread_each(
    peer: OpenAIPeer, carol: User, acme: Project
) -> None:
    calls = 200
    slow_model(acme, peer)
    _, credential = start_run(carol, acme)
    with internal_listener_process() as (base, process):
        # Warm: imports, pools, first requests. They need not be slow (the peer reads its
        # latency at each request), only the measured ones must all be in flight at once.
        peer.latency = 0.0
        calls_in_background(base, credential, 5)()
        peer.latency = LATENCY
        idle = status_of(process.pid)
        ends = calls_in_background(base, credential, calls)
        all_in_flight(peer, calls, ends)
        busy = status_of(process.pid)
        assert ends() == [200] * calls
    per_call_mb = (busy["rss_kb"] - idle["rss_kb"]) / 1024 / calls
    print(f"internal_mb_per_call={per_call_mb:.3f} threads idle={idle['threads']} "
          f"busy={busy['threads']}")
    assert busy["threads"] <= idle["threads"] + 8, (idle, busy)
    assert per_call_mb <= 0.5, per_call_mb
