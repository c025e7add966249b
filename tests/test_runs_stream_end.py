"""A run's event stream ends in the same write as its last event: the chunk with the
terminal event is sent with the answer's end (one ASGI message, one write), so a
client gets the ending and the end of the stream at once, not in two reads
(kionga.stream_end's LastChunk, sent by the public listener's stream handler)."""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncGenerator, MutableMapping
from typing import Any

import redis

from kionga.stream_end import LastChunk
from kionga.stream_handler import PooledASGIHandler
from runner import protocol
from runs.event_keys import live_fields
from runs.sse import run_event_stream
from runs.start_stream import event_stream, with_head

STARTED = {"seq": 0, "type": "run.started", "at": "2026-11-30T00:00:00+00:00"}
COMPLETED = {"seq": 1, "type": "run.completed", "at": "2026-11-30T00:00:01+00:00",
             "output": "hi", "usage": {"tokens": 1}}


def bodies(chunks: AsyncGenerator[bytes, None]) -> list[tuple[bytes, bool]]:
    sent: list[MutableMapping[str, Any]] = []

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(message)

    # What the public listener's stream handler does with the events view's answer.
    asyncio.run(PooledASGIHandler().send_response(event_stream(chunks), send))
    return [(m.get("body", b""), m.get("more_body", False)) for m in sent
            if m["type"] == "http.response.body"]


def test_the_last_chunk_is_sent_with_the_end_of_the_answer() -> None:
    async def chunks() -> AsyncGenerator[bytes, None]:
        yield b"a"
        yield LastChunk(b"b")

    assert bodies(chunks()) == [(b"a", True), (b"b", False)]


def test_a_stream_without_a_last_chunk_still_ends() -> None:
    async def chunks() -> AsyncGenerator[bytes, None]:
        yield b"a"

    assert bodies(chunks()) == [(b"a", True), (b"", False)]


def last_frame(body: bytes) -> bytes:
    return body.rstrip(b"\n").split(b"\n\n")[-1]


def test_an_ended_runs_stream_is_one_last_chunk_with_or_without_the_runs_head() -> None:
    stored = (True, [STARTED, COMPLETED])
    plain = bodies(run_event_stream("run-1", -1, stored))
    headed = bodies(with_head({"id": "run-1"}, run_event_stream("run-1", -1, stored)))
    for answer in (plain, headed):
        [(body, more)] = answer
        assert not more
        assert b"id: 0\nevent: run.started" in body
        assert last_frame(body).startswith(b"id: 1\nevent: run.completed\ndata: ")
    assert headed[0][0].startswith(b'event: run\ndata: {"id":"run-1"}')


def test_the_live_batch_with_the_ending_ends_the_answer(rds: redis.Redis) -> None:
    run_id = str(uuid.uuid4())
    for event in (STARTED, COMPLETED):
        rds.xadd(protocol.run_stream(run_id), live_fields(run_id, json.dumps(event).encode()))
    try:
        answer = bodies(run_event_stream(run_id, -1, (False, [])))
    finally:
        rds.delete(protocol.run_stream(run_id))
    assert answer[0] == (b"retry: 2000\n\n", True)
    (body, more), = answer[1:]
    assert not more and last_frame(body).startswith(b"id: 1\nevent: run.completed")
