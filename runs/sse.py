"""Server-Sent Events of one run: stored events first, then live from the run's stream.

A client resuming with Last-Event-ID gets every stored event after it from
PostgreSQL, then the run's Redis stream, skipping seqs it already has (dedupe on
seq), so it misses none and gets none twice. A live entry counts only with the MAC
of the run's event key (runs/event_keys.py), as the ingester demands of stored ones:
anything else that can write to Redis (the runner's user can append to any run's
stream) cannot show a run's readers an event, an ending least of all. Deltas carry
no id of their own (an SSE frame without id keeps the resume point), and are live
only. The stream ends after the terminal event, or cleanly when it needs the database
and the database is away (the client reconnects with Last-Event-ID; the gateway
answers 503 until it is back). Nothing here blocks a thread while it waits.

The live stream is bounded (runner/live.py: its oldest entries go, a stored event too
large for it is there as its seq only) and, once the run's end is stored, keeps only
its last entry (runs/live_streams.py): whatever it no longer holds is taken from
PostgreSQL, waiting a moment for the ingester when it has not stored it yet.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, Final

import redis

from kionga.database import DatabaseUnavailable
from kionga.pooled import pooled
from kionga.redis_client import async_redis
from kionga.stream_end import LastChunk
from runner import protocol
from runs.event_keys import entry_authentic
from runs.models import FINAL_STATUSES, Run, RunEvent

log = logging.getLogger(__name__)

KEEPALIVE_MS = 15_000
RECONNECT_SECONDS = 0.5
# A reader logs its first dropped entry, then one line per this many more: a flood of
# forged entries does not become a flood of log lines.
DROPS_PER_LOG: Final = 1000
# Events the live stream skipped are read from PostgreSQL; the ingester stores them
# within milliseconds as a rule, so a reader polls this long for them, then goes on
# (a run whose event could not be stored has a hole there for good).
STORED_WAIT_SECONDS = 5.0
STORED_POLL_SECONDS = 0.1


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


# A stream lives for minutes: these hand their connection back at once (kionga.pooled).
stored_after = pooled(_stored_after)
is_final = pooled(_is_final)


class _Cursor:
    """The last seq sent; true once the terminal event went out; live entries dropped."""

    def __init__(self, last_seq: int) -> None:
        self.last_seq = last_seq
        self.done = False
        self.dropped = 0

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


async def run_event_stream(run_id: str, last_seq: int,
                           start: Opening) -> AsyncGenerator[bytes, None]:
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
            entry = _authentic_entry(run_id, entry_id, fields, cursor)
            if entry is None:
                continue
            event, stored_only = entry
            seq = event.get("seq")
            if event.get("type") != "node.delta" and type(seq) is int:
                # Seqs the live stream skipped (trimmed, or too large for it): stored.
                async for out in _from_store(run_id, cursor, seq if stored_only else seq - 1):
                    batch.append(out)
            if not stored_only and (taken := cursor.take(event)) is not None:
                batch.append(taken)
            if cursor.done:
                break
        if batch:
            yield LastChunk(b"".join(batch)) if cursor.done else b"".join(batch)


def _authentic_entry(run_id: str, entry_id: Any, fields: dict[bytes, Any],
                     cursor: _Cursor) -> tuple[dict[str, Any], bool] | None:
    """A live entry's event, and whether it is only the seq and type of a stored event
    (runner/live.py), when it carries the MAC of the run's event key; else None
    (dropped, and logged)."""
    stub, data = fields.get(protocol.LIVE_STORED_ONLY_FIELD), fields.get(protocol.LIVE_EVENT_FIELD)
    encoded, stored_only = (stub, True) if stub is not None else (data, False)
    mac = fields.get(protocol.LIVE_MAC_FIELD)
    if isinstance(encoded, bytes) and isinstance(mac, bytes) and entry_authentic(
            run_id, protocol.live_mac_message(encoded, stored_only), mac):
        event = json.loads(encoded)
        if isinstance(event, dict):
            return event, stored_only
    cursor.dropped += 1
    if cursor.dropped % DROPS_PER_LOG == 1:
        log.warning("run %s: dropped live entry %r without the run's MAC (%d so far on this "
                    "stream)", run_id, entry_id, cursor.dropped)
    return None


async def _from_store(run_id: str, cursor: _Cursor, through: int) -> AsyncIterator[bytes]:
    """The stored events after the cursor up to seq `through`, waiting up to
    STORED_WAIT_SECONDS for the ingester to store them (stored seqs are consecutive)."""
    if through <= cursor.last_seq:
        return
    after, deadline = cursor.last_seq, time.monotonic() + STORED_WAIT_SECONDS
    while True:
        events = await stored_after(run_id, after, before=through + 1)
        if len(events) >= through - after or time.monotonic() >= deadline:
            break
        await asyncio.sleep(STORED_POLL_SECONDS)
    for event in events:
        if (out := cursor.take(event)) is not None:
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
