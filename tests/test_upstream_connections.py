"""The resource calls' connections (kionga.upstream on kionga.upstream_sessions): a
project's consecutive calls to one upstream reuse one kept-alive connection, two
projects never share one, and a pooled connection changes nothing the egress policy
refuses. A real HTTP/1.1 peer on loopback (tests/keepalive_peer) counts the
connections it accepts."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterator
from typing import Any, TypeVar

import pytest

from kionga import upstream, upstream_sessions
from kionga.errors import APIError
from tests.internal_helpers import closed_port_url
from tests.keepalive_peer import KeepAlivePeer

T = TypeVar("T")
UNREACHABLE = (503, "Model 'gpt' cannot be reached.")
LINES = ['data: {"choices":[{"delta":{"content":"h"}}]}', "",
         'data: {"choices":[{"delta":{"content":"i"}}]}', "", "data: [DONE]", ""]


@pytest.fixture
def peer() -> Iterator[KeepAlivePeer]:
    with KeepAlivePeer().serving() as served:
        yield served


def run(work: Awaitable[T]) -> T:
    async def main() -> T:
        return await work
    return asyncio.run(main())


async def call(url: str, project: Any = "p1") -> upstream.Answer:
    return await upstream.send("model 'gpt'", "POST", url + "/v1/chat", project=project,
                               headers={"Authorization": "Bearer sk-x"}, timeout=5,
                               json_body={"messages": []})


async def stream_lines(url: str, project: Any = "p1", until_done: bool = False) -> list[str]:
    async with upstream.stream("model 'gpt'", url + "/v1/chat", project=project,
                               headers={}, timeout=5, json_body={"stream": True}) as answer:
        assert answer.status == 200 and answer.content_type == "text/event-stream"
        found = []
        async for line in upstream.lines("model 'gpt'", answer):
            found.append(line)
            if until_done and line == "data: [DONE]":
                break  # as the listener stops, before the body's end
        return found


async def refusal(work: Awaitable[Any]) -> tuple[int, str]:
    with pytest.raises(APIError) as caught:
        await work
    return caught.value.status_code, str(caught.value.detail)


def test_a_projects_consecutive_calls_reuse_one_connection(peer: KeepAlivePeer) -> None:
    async def work() -> None:
        for _ in range(3):
            assert (await call(peer.url)).json()["choices"][0]["message"]["content"] == "hi"
        assert await stream_lines(peer.url) == LINES
        assert await stream_lines(peer.url, until_done=True) == LINES[:-1]
        await call(peer.url)

    run(work())
    assert (peer.requests, peer.accepted) == (6, 1)


def test_two_projects_never_share_a_connection(peer: KeepAlivePeer) -> None:
    async def work() -> None:
        await call(peer.url, "p1")
        await call(peer.url, "p2")
        await call(peer.url, "p1")
        await stream_lines(peer.url, "p2")

    run(work())
    assert (peer.requests, peer.accepted) == (4, 2)


@pytest.mark.allow_output  # failures are logged (without URLs)
def test_a_reset_mid_stream_cuts_the_answer_short() -> None:
    with KeepAlivePeer(cut_after=20).serving() as cutting:
        assert run(refusal(stream_lines(cutting.url))) == (
            502, "Model 'gpt' cut its answer short.")


@pytest.mark.allow_output
def test_a_pooled_connection_does_not_outlive_a_policy_change(
        peer: KeepAlivePeer, settings: Any) -> None:
    async def work() -> None:
        await call(peer.url)  # allowed (tests allow 127.0.0.1): its connection stays open
        settings.KIONGA_EGRESS_ALLOW = []  # loopback is not a public address
        assert await refusal(call(peer.url)) == UNREACHABLE
        assert await refusal(stream_lines(peer.url)) == UNREACHABLE
        settings.KIONGA_EGRESS_ALLOW = ["127.0.0.1"]
        await call(peer.url)
        # A platform service is refused even at an allowed address.
        settings.KIONGA_AGENT_DESIGNER_CALLBACK_URL = peer.url + "/api/v1"
        assert await refusal(call(peer.url)) == UNREACHABLE

    run(work())
    assert peer.requests == 2


@pytest.mark.allow_output
def test_a_name_is_checked_at_each_connection(peer: KeepAlivePeer, settings: Any) -> None:
    async def work() -> None:
        settings.KIONGA_EGRESS_ALLOW = ["localhost"]  # a name allows what it resolves to
        await call(peer.url.replace("127.0.0.1", "localhost"))
        # The same address under another name (a literal) is not allowed.
        assert await refusal(call(peer.url)) == UNREACHABLE

    run(work())
    assert peer.requests == 1


@pytest.mark.allow_output
def test_every_failure_to_connect_has_one_message() -> None:
    async def work() -> set[tuple[int, str]]:
        return {await refusal(call(target)) for target in (
            closed_port_url(), "http://no-such-host.invalid", "http://[::1",
            "http://169.254.169.254")}

    assert run(work()) == {UNREACHABLE}


def test_sessions_close_with_their_loop(peer: KeepAlivePeer) -> None:
    async def work() -> asyncio.AbstractEventLoop:
        await call(peer.url)
        assert asyncio.get_running_loop() in upstream_sessions._BY_LOOP
        return asyncio.get_running_loop()

    loop = run(work())
    assert loop not in upstream_sessions._BY_LOOP
