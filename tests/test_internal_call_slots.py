"""kionga.upstream.call_slot: upstream calls in flight per project and per resource are
bounded (KIONGA_UPSTREAM_CALLS_PER_PROJECT, _PER_RESOURCE); a call waits for a slot
within its time, then gets resource_unavailable; other projects are not held up."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest
from django.test import override_settings

from kionga import upstream
from kionga.errors import APIError

pytestmark = pytest.mark.allow_output  # a refused wait is logged


class Upstreams:
    """Calls that hold their slot until released; counts what is in flight."""

    def __init__(self) -> None:
        self.now: Counter[str] = Counter()
        self.peak: Counter[str] = Counter()
        self.release = asyncio.Event()

    async def call(self, project: int, resource: str, wait: float = 10.0) -> None:
        async with upstream.call_slot(project, resource, f"model {resource!r}", wait):
            for key in (f"p{project}", f"p{project}/{resource}"):
                self.now[key] += 1
                self.peak[key] = max(self.peak[key], self.now[key])
            await self.release.wait()
            for key in (f"p{project}", f"p{project}/{resource}"):
                self.now[key] -= 1


async def settle() -> None:
    for _ in range(10):
        await asyncio.sleep(0)


@override_settings(KIONGA_UPSTREAM_CALLS_PER_PROJECT=3, KIONGA_UPSTREAM_CALLS_PER_RESOURCE=2)
def test_calls_in_flight_are_bounded_per_resource_and_per_project() -> None:
    async def go() -> Upstreams:
        calls = Upstreams()
        tasks = [asyncio.create_task(calls.call(1, key)) for key in ["x"] * 4 + ["y"] * 4]
        await settle()
        assert (calls.now["p1/x"], calls.now["p1"]) == (2, 3)
        # Another project is not held up by project 1's full slots.
        other = asyncio.create_task(calls.call(2, "x"))
        await settle()
        assert calls.now["p2"] == 1
        calls.release.set()
        await asyncio.gather(*tasks, other)
        return calls

    calls = asyncio.run(go())
    assert max(calls.peak["p1/x"], calls.peak["p1/y"]) == 2 and calls.peak["p1"] == 3
    assert sum(calls.now.values()) == 0


@override_settings(KIONGA_UPSTREAM_CALLS_PER_PROJECT=1)
def test_a_call_that_waits_too_long_for_a_slot_is_unavailable() -> None:
    async def go() -> APIError:
        calls = Upstreams()
        holder = asyncio.create_task(calls.call(1, "x"))
        await settle()
        with pytest.raises(APIError) as refused:
            await calls.call(1, "y", wait=0.05)
        calls.release.set()
        await holder
        # The slot is free again: the next call goes through at once.
        await calls.call(1, "y", wait=0.05)
        return refused.value

    error = asyncio.run(go())
    assert (error.status_code, error.code) == (503, "resource_unavailable")
    assert "busy" in str(error.detail)


@override_settings(KIONGA_UPSTREAM_CALLS_PER_PROJECT=1)
def test_a_waiting_call_gets_a_slot_freed_in_time_and_a_cancelled_one_leaves_no_trace() -> None:
    async def go() -> Upstreams:
        calls = Upstreams()
        holder = asyncio.create_task(calls.call(1, "x"))
        await settle()
        waiter = asyncio.create_task(calls.call(1, "y", wait=5.0))
        cancelled = asyncio.create_task(calls.call(1, "z", wait=5.0))
        await settle()
        assert calls.now["p1"] == 1
        cancelled.cancel()
        await settle()
        calls.release.set()
        await asyncio.gather(holder, waiter)
        assert cancelled.cancelled()
        return calls

    calls = asyncio.run(go())
    assert calls.peak["p1"] == 1 and calls.peak["p1/y"] == 1 and calls.peak["p1/z"] == 0
    # Every slot was given back and every idle key dropped.
    assert upstream._SLOTS._entries == {}
