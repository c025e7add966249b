"""Server-Sent Events of one run: stored events first, then live from the run's stream.

A client resuming with Last-Event-ID gets every stored event after it from
PostgreSQL, then the run's Redis stream, skipping seqs it already has (dedupe on
seq), so it misses none and gets none twice. Deltas carry no id of their own (an
SSE frame without id keeps the resume point), and are live only. The stream ends
after the terminal event, or cleanly when it needs the database and the database is
away (the client reconnects with Last-Event-ID; the gateway answers 503 until it is
back). Nothing here blocks a thread while it waits.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import redis

from kionga.database import DatabaseUnavailable
from kionga.hot_http import LastChunk
from kionga.redis_client import async_redis
from runner import protocol
from runs.models import FINAL_STATUSES, Run, RunEvent
from runs.pooled import pooled

KEEPALIVE_MS = 15_000
RECONNECT_SECONDS = 0.5


def frame(event: dict[str, Any]) -> bytes:
    data = json.dumps(event, ensure_ascii=False, separators=(",", ":"))
    if event.get("type") == "node.delta":
        return f"event: delta\ndata: {data}\n\n".encode()
    return f"id: {event['seq']}\nevent: {event['type']}\ndata: {data}\n\n".encode()


def _stored_after(run_id: str, after: int, before: int | None = None) -> list[dict[str, Any]]:
    rows = RunEvent.objects.filter(run_id=run_id, seq__gt=after)
    if before is not None:
        rows = rows.filter(seq__lt=before)
    return [r.data for r in rows.order_by("seq")]


def _is_final(run_id: str) -> bool:
    return Run.objects.filter(pk=run_id, status__in=FINAL_STATUSES).exists()


Opening = tuple[bool, list[dict[str, Any]]]


def opening(run: Run, after: int) -> Opening:
    """Whether the run had ended when `run` was read, and its stored events after
    `after` (sync; the view calls it in the same thread hop as its access check).
    The row is read first: a run final by then has all its events stored."""
    return run.status in FINAL_STATUSES, _stored_after(str(run.pk), after)


# A stream lives for minutes: these hand their connection back at once (runs.pooled).
stored_after = pooled(_stored_after)
is_final = pooled(_is_final)


class _Cursor:
    """The last seq sent; true once the terminal event went out."""

    def __init__(self, last_seq: int) -> None:
        self.last_seq = last_seq
        self.done = False

    def take(self, event: dict[str, Any]) -> bytes | None:
        if event.get("type") == "node.delta":
            return frame(event) if event.get("seq", -1) >= self.last_seq else None
        seq = event.get("seq")
        if type(seq) is not int or seq <= self.last_seq or self.done:
            # The client already has this one; if it was the end, so are we.
            ended = event.get("type") in protocol.TERMINAL_TYPES and type(seq) is int
            self.done = self.done or ended
            return None
        self.last_seq = seq
        self.done = event.get("type") in protocol.TERMINAL_TYPES
        return frame(event)


async def run_event_stream(run_id: str, last_seq: int, start: Opening) -> AsyncIterator[bytes]:
    """The stream after `last_seq`, given `start` = opening(run_id, last_seq). Frames
    that are ready together go out as one chunk (one write to the client, not one each);
    the chunk with the terminal event is a LastChunk (the answer ends with it)."""
    cursor = _Cursor(last_seq)
    final, stored = start
    opening_frames = [b"retry: 2000\n\n"]
    for event in stored:
        if (out := cursor.take(event)) is not None:
            opening_frames.append(out)
    if cursor.done or final:
        yield LastChunk(b"".join(opening_frames))
        return
    yield b"".join(opening_frames)
    try:
        async for out in _live(run_id, cursor):
            yield out
    except DatabaseUnavailable:
        # Frames taken but not sent are sent again after the client's Last-Event-ID.
        yield LastChunk(b": database unavailable\n\n")


async def _live(run_id: str, cursor: _Cursor) -> AsyncIterator[bytes]:
    client = async_redis()
    stream, position = protocol.run_stream(run_id), "0-0"
    while not cursor.done:
        try:
            answer: Any = await client.xread({stream: position}, count=500, block=KEEPALIVE_MS)
        except (redis.ConnectionError, redis.TimeoutError):
            # Redis is restarting: what was stored is safe; keep the client and go on.
            yield b": reconnecting\n\n"
            await asyncio.sleep(RECONNECT_SECONDS)
            continue
        if not answer:
            async for out in _when_quiet(run_id, cursor):
                yield out
            continue
        batch: list[bytes] = []  # one chunk per batch read
        for entry_id, fields in answer[0][1]:
            position = entry_id
            event = json.loads(fields[b"e"])
            async for out in _fill_gap(run_id, cursor, event):
                batch.append(out)
            if (taken := cursor.take(event)) is not None:
                batch.append(taken)
            if cursor.done:
                break
        if batch:
            yield LastChunk(b"".join(batch)) if cursor.done else b"".join(batch)


async def _fill_gap(run_id: str, cursor: _Cursor, event: dict[str, Any]) -> AsyncIterator[bytes]:
    # The live stream skipped seqs (Redis lost entries): the stored log may have them.
    seq = event.get("seq")
    if event.get("type") != "node.delta" and type(seq) is int and seq > cursor.last_seq + 1:
        for missing in await stored_after(run_id, cursor.last_seq, before=seq):
            if (out := cursor.take(missing)) is not None:
                yield out


async def _when_quiet(run_id: str, cursor: _Cursor) -> AsyncIterator[bytes]:
    # No live entry for a while: a run that ended while its stream was lost is
    # finished from the stored log; otherwise keep proxies from closing the line.
    if await is_final(run_id):
        for event in await stored_after(run_id, cursor.last_seq):
            if (out := cursor.take(event)) is not None:
                yield out
        cursor.done = True
        return
    yield b": keepalive\n\n"
