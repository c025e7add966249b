"""The runs of one event loop share one session to the internal listener
(runner.listener_http): their calls reuse one kept-alive connection, each with its own
credential; a connection the listener closed is not a failed call; and a request is
sent again only when the listener cannot have taken it (runner.http_resources' rule)."""

from __future__ import annotations

import asyncio

import pytest

from runner.http_resources import HttpResources
from runner.listener_http import ListenerSession
from runner.resources import ResourceError
from tests.listener_peer import DROP, kept_alive_peer


def test_the_runs_of_one_loop_share_one_connection_with_their_own_credentials() -> None:
    async def two_runs(url: str) -> None:
        shared = ListenerSession()
        first = HttpResources(url, "credential-one", session=shared)
        second = HttpResources(url, "credential-two", session=shared)
        for _ in range(3):
            await first.search_knowledge("kb", "q", 1)
            await second.get_approval("a")
        await first.aclose()  # a run's end leaves the others' connections
        await second.search_knowledge("kb", "q", 1)
        await shared.aclose()

    with kept_alive_peer() as peer:
        asyncio.run(two_runs(peer.url))
    assert peer.accepted == 1
    assert [(auth, connection) for _m, _p, auth, connection in peer.requests] == [
        ("Bearer credential-one", 1), ("Bearer credential-two", 1)] * 3 + [
        ("Bearer credential-two", 1)]


def test_a_connection_the_listener_closed_idle_costs_no_call() -> None:
    async def calls(url: str) -> None:
        resources = HttpResources(url, "credential")
        await resources.invoke_function("f", 1)
        await asyncio.sleep(0.4)  # the listener closes the idle connection meanwhile
        await resources.invoke_function("f", 2)
        await resources.aclose()

    with kept_alive_peer(idle_seconds=0.1) as peer:
        asyncio.run(calls(peer.url))
    assert peer.accepted == 2
    assert [connection for *_rest, connection in peer.requests] == [1, 2]


@pytest.mark.allow_output  # the call sent again is logged
def test_a_reused_connection_cut_before_the_answer_is_sent_again() -> None:
    async def calls(url: str) -> dict[str, object]:
        resources = HttpResources(url, "credential")
        await resources.invoke_function("f", 1)
        try:
            return await resources.invoke_function("f", 2)  # its connection is cut
        finally:
            await resources.aclose()

    with kept_alive_peer(script=["answer", DROP]) as peer:
        assert asyncio.run(calls(peer.url)) == {"documents": []}
    assert [connection for *_rest, connection in peer.requests] == [1, 1, 2]


def test_a_post_cut_on_a_new_connection_is_not_sent_again() -> None:
    # The listener read it and may have begun its upstream call: the node's retry
    # policy decides, not the client.
    async def call(url: str) -> None:
        resources = HttpResources(url, "credential")
        try:
            await resources.invoke_function("f", 1)
        finally:
            await resources.aclose()

    with kept_alive_peer(script=[DROP]) as peer, pytest.raises(ResourceError) as cut:
        asyncio.run(call(peer.url))
    assert cut.value.code == "resource_unavailable"
    assert len(peer.requests) == 1


@pytest.mark.allow_output  # the call sent again is logged
def test_a_get_cut_on_a_new_connection_is_sent_again() -> None:
    async def call(url: str) -> dict[str, object]:
        resources = HttpResources(url, "credential")
        try:
            return await resources.get_approval("a")
        finally:
            await resources.aclose()

    with kept_alive_peer(script=[DROP, DROP]) as peer:
        assert asyncio.run(call(peer.url)) == {"documents": []}
    assert len(peer.requests) == 3
