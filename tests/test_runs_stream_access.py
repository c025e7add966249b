"""An open stream's access re-check (runs.stream_access.rechecked) falls due on time even
while the stream waits for its next chunk; a refusal ends the stream with a comment
naming it (the stream's own cleanup runs); a re-check the database cannot answer
keeps the stream and is asked again at the next interval."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any

import pytest
from django.db import OperationalError

from kionga.errors import not_found
from kionga.stream_end import LastChunk
from runs.stream_access import Check, rechecked


class Waiting:
    """A stream that sends its opening, then waits (as on a quiet run) until closed."""

    def __init__(self) -> None:
        self.closed = False

    async def chunks(self) -> AsyncIterator[bytes]:
        try:
            yield b"retry: 2000\n\n"
            await asyncio.sleep(3600)
            yield b": never\n\n"
        finally:
            self.closed = True


def read(check: Check, seconds: float) -> tuple[list[bytes], bool, Waiting]:
    """What the stream sent within `seconds`, and whether it ended by itself."""
    stream, sent = Waiting(), []

    async def follow() -> bool:
        chunks = rechecked(stream.chunks(), check)
        try:
            async with asyncio.timeout(seconds):
                async for chunk in chunks:
                    sent.append(chunk)
            return True
        except TimeoutError:
            return False
        finally:
            await chunks.aclose()

    ended = asyncio.run(follow())
    return sent, ended, stream


def test_a_refused_recheck_ends_the_waiting_stream_with_its_reason(settings: Any) -> None:
    settings.KIONGA_STREAM_RECHECK_SECONDS = 1
    asked: list[float] = []

    async def check() -> None:
        asked.append(time.monotonic())
        if len(asked) == 2:
            raise not_found("Run not found.")

    began = time.monotonic()
    sent, ended, stream = read(check, 10.0)
    assert ended and stream.closed
    assert sent == [b"retry: 2000\n\n", b": closed not_found: Run not found.\n\n"]
    assert isinstance(sent[-1], LastChunk)
    assert [round(at - began) for at in asked] == [1, 2]  # on time, while it waited


@pytest.mark.allow_output  # each failed re-check logs a warning
def test_a_recheck_the_database_cannot_answer_keeps_the_stream(
        settings: Any, caplog: pytest.LogCaptureFixture) -> None:
    settings.KIONGA_STREAM_RECHECK_SECONDS = 1
    asked = []

    async def check() -> None:
        asked.append(1)
        raise OperationalError("the database is restarting")

    sent, ended, stream = read(check, 2.6)
    assert not ended and stream.closed  # still open when the reader left; then cleaned up
    assert sent == [b"retry: 2000\n\n"]
    assert len(asked) == 2  # asked again at the next interval
    assert "re-check failed" in caplog.text


class LosesOneCancel(Waiting):
    """A stream whose wait loses the first cancellation, as Python 3.11's
    asyncio.wait_for does when the cancellation meets its future's completion."""

    async def chunks(self) -> AsyncIterator[bytes]:
        try:
            yield b"retry: 2000\n\n"
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                pass  # lost
            await asyncio.sleep(3600)
            yield b": never\n\n"
        finally:
            self.closed = True


def test_a_stream_whose_wait_loses_a_cancellation_still_ends_when_its_client_leaves() -> None:
    stream = LosesOneCancel()

    async def allowed() -> None:
        return None

    async def leave_after_the_opening() -> None:
        chunks = rechecked(stream.chunks(), allowed)
        assert await anext(chunks) == b"retry: 2000\n\n"
        waiting = asyncio.ensure_future(anext(chunks))
        await asyncio.sleep(0.05)
        waiting.cancel()  # the client left: the server cancels the answer
        ended, _ = await asyncio.wait({waiting}, timeout=5)
        assert ended and waiting.cancelled()
        await chunks.aclose()

    asyncio.run(leave_after_the_opening())
    assert stream.closed
