"""A run's live stream, bounded in bytes: what the sink appends, and how much it keeps.

The sink is the only writer of its run's live stream while the run lives, so it knows
the size of every entry there. It keeps those sizes in order and, with each append,
tells Redis how many of the newest entries to keep (XADD MAXLEN = n, exact), so the
stream never holds more than its bound (protocol.LIVE_STREAM_MAX_BYTES, each entry
counted at the most it may cost Redis, protocol.live_entry_cost).

A project's live streams share protocol.PROJECT_LIVE_MAX_BYTES, accounted in Redis
(protocol.LIVE_BYTES_LUA): a run whose stream is past LIVE_STREAM_PRESSED_BYTES
records its size there and learns what the project's other runs hold. When they leave
it no room to reach its full bound, the run is pressed: its deltas stay out of the
live stream and the stream keeps only its newest LIVE_STREAM_PRESSED_BYTES, until
room is back. Only the project's own runs are pressed, never another tenant's; and
stored events reach the ingest stream whatever the live stream keeps.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from runner.protocol import (
    LIVE_MAC_COST,
    LIVE_STREAM_MAX_BYTES,
    LIVE_STREAM_PRESSED_BYTES,
    PROJECT_LIVE_MAX_BYTES,
    STREAM_MAXLEN,
    encode_event,
    live_bytes_key,
    live_entry_cost,
)


@dataclass(frozen=True)
class Append:
    """One live entry to append (the encoded event, or its seq and type only when
    `stored_only`; the sink adds its MAC), and how many of the newest entries the
    stream keeps."""

    data: bytes
    stored_only: bool
    keep: int


class LiveStream:
    def __init__(self, project_id: int | None) -> None:
        self._sizes: deque[int] = deque()  # the entries in the stream, oldest first
        self.bytes = 0
        self.pressed = False
        self._recorded = False  # this run's size is in its project's account
        # A task without a project (a malformed payload) is bounded, not accounted.
        self._account = None if project_id is None else live_bytes_key(project_id)

    @property
    def bound(self) -> int:
        return LIVE_STREAM_PRESSED_BYTES if self.pressed else LIVE_STREAM_MAX_BYTES

    def append(self, event_type: str, seq: int, data: bytes) -> Append | None:
        """The entry for an encoded event, or None when it stays out of the live stream
        (a delta while pressed, or one larger than the bound). A stored event larger
        than the bound is appended as its seq and type only (readers take it from the
        stored log)."""
        is_delta = event_type == "node.delta"
        if is_delta and self.pressed:
            return None
        stored_only = False
        size = live_entry_cost(len(data) + LIVE_MAC_COST)
        if size > self.bound:
            if is_delta:
                return None
            data = encode_event({"seq": seq, "type": event_type}).encode("utf-8")
            stored_only = True
            size = live_entry_cost(len(data) + LIVE_MAC_COST)
        self._sizes.append(size)
        self.bytes += size
        self._fit()
        return Append(data, stored_only, len(self._sizes))

    def trim(self) -> int | None:
        """How many entries to keep when the stream is over its bound without an append
        (the run was just pressed), else None."""
        if self.bytes <= self.bound:
            return None
        self._fit()
        return len(self._sizes)

    def account(self) -> tuple[str, int] | None:
        """(the project's account key, this run's bytes to record there; 0: none) when
        this batch must tell the account, else None (a small stream is not counted)."""
        if self._account is None:
            return None
        counted = self.bytes if self.bytes > LIVE_STREAM_PRESSED_BYTES else 0
        if not (counted or self.pressed or self._recorded):
            return None
        self._recorded = counted > 0
        return self._account, counted

    def settle(self, others: int) -> None:
        """The account's answer: the project's other runs hold `others` bytes."""
        self.pressed = others + LIVE_STREAM_MAX_BYTES > PROJECT_LIVE_MAX_BYTES

    def _fit(self) -> None:
        while self.bytes > self.bound or len(self._sizes) > STREAM_MAXLEN:
            self.bytes -= self._sizes.popleft()
