"""A resource call waits for the listener's answer as long as its node allows: a
listener under load queues a call before serving it, and the client's own timeout
(KIONGA_RUNNER_HTTP_TIMEOUT) failing the node there failed runs the listener was about
to serve. A read that only waits (GET: an approval's long poll) keeps that bound."""

from __future__ import annotations

import asyncio

import pytest

from runner.http_resources import HttpResources
from runner.resources import ResourceError
from tests.listener_peer import LATE, kept_alive_peer


async def _call(url: str, call: str) -> dict[str, object]:
    resources = HttpResources(url, "credential", timeout=0.5)
    try:
        if call == "function":
            return await resources.invoke_function("f", 1)
        return await resources.get_approval("a")
    finally:
        await resources.aclose()


def test_a_call_answered_after_the_client_timeout_is_served() -> None:
    with kept_alive_peer(script=[LATE], late_seconds=1.5) as peer:
        answer = asyncio.run(_call(peer.url, "function"))
    assert answer == peer.answer
    assert len(peer.requests) == 1  # waited for, never sent again


def test_the_node_timeout_still_ends_a_call_that_is_never_answered() -> None:
    async def bounded(url: str) -> None:
        async with asyncio.timeout(1.0):  # the engine's node timeout
            await _call(url, "function")

    with kept_alive_peer(script=[LATE], late_seconds=3.0) as peer, \
            pytest.raises(TimeoutError):
        asyncio.run(bounded(peer.url))


@pytest.mark.allow_output  # the read that timed out is logged
def test_a_poll_still_ends_at_the_client_timeout() -> None:
    with kept_alive_peer(script=[LATE], late_seconds=3.0) as peer, \
            pytest.raises(ResourceError) as raised:
        asyncio.run(_call(peer.url, "approval"))
    assert raised.value.code == "resource_unavailable"
