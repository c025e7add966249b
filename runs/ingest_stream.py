"""The ingest stream on the gateway's side: read, claim, acknowledge, quarantine, trim.

One consumer group (`gateway`) reads the shared stream; an entry stays pending in
its consumer's list (PEL) until its events are committed to PostgreSQL (or it is
quarantined). A consumer that died leaves its pending entries behind: an ingester
claims every pending entry when it starts (not only those idle for IDLE_CLAIM_MS),
because its predecessor under another name (host-pid) may have died an instant
ago; claiming an entry a live peer is still storing costs a duplicate insert, which
storage ignores (unique run + seq, status only from stored events).
"""

from __future__ import annotations

import logging
import os
import socket
from collections.abc import Iterator
from typing import Any, Final

import redis

from runner import protocol

log = logging.getLogger(__name__)

BATCH: Final = 500
IDLE_CLAIM_MS: Final = 30_000
# The reaper reads the uncommitted part of the stream to learn which runs still have
# events on the way; past this many entries it does not know, and waits.
UNDRAINED_SCAN: Final = 10_000

Entry = tuple[bytes, dict[bytes, bytes]]


def consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


def ensure_group(client: redis.Redis) -> None:
    """Our consumer group, created when missing. Looked up first: a full Redis refuses
    XGROUP CREATE even for a group that exists, but still lets the ingester read, store,
    acknowledge and trim, which frees memory."""
    if _has_group(client):
        return
    try:
        client.xgroup_create(protocol.INGEST_STREAM, protocol.INGEST_GROUP, id="0",
                             mkstream=True)
    except redis.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


def _has_group(client: redis.Redis) -> bool:
    try:
        groups: Any = client.xinfo_groups(protocol.INGEST_STREAM)
    except redis.ResponseError as exc:
        if "no such key" in str(exc):
            return False
        raise
    return any(_text(g["name"]) == protocol.INGEST_GROUP for g in groups)


def warn_if_redis_evicts(client: redis.Redis) -> None:
    """Say loudly at start when Redis may evict keys or has no memory limit (see
    docs/decisions/redis-memory.md): the ingest stream and the runner's queue must never
    be evicted. Best effort: a Redis that cannot say is not a reason to stop."""
    try:
        memory: Any = client.info("memory")
    except redis.RedisError as exc:
        log.warning("could not read Redis's memory settings (%s)", type(exc).__name__)
        return
    policy = str(memory.get("maxmemory_policy", ""))
    if policy != protocol.REDIS_MAXMEMORY_POLICY:
        log.error("Redis runs with maxmemory-policy %s: it may evict the ingest stream or "
                  "the runner's queue; run it with %s", policy,
                  protocol.REDIS_MAXMEMORY_POLICY)
    if not memory.get("maxmemory"):
        log.warning("Redis has no maxmemory: a full host, not Redis, will stop it")


def read_new(client: redis.Redis, consumer: str, block_ms: int) -> list[Entry]:
    answer: Any = client.xreadgroup(protocol.INGEST_GROUP, consumer,
                                    {protocol.INGEST_STREAM: ">"}, count=BATCH, block=block_ms)
    return [entry for _stream, entries in answer or [] for entry in entries]


def claimed_batches(client: redis.Redis, consumer: str, min_idle_ms: int) -> Iterator[list[Entry]]:
    """Every pending entry idle for at least `min_idle_ms`, taken over by `consumer`,
    in batches, oldest first (one pass over the group's pending list)."""
    cursor: Any = "0-0"
    while True:
        answer: Any = client.xautoclaim(protocol.INGEST_STREAM, protocol.INGEST_GROUP,
                                        consumer, min_idle_ms, cursor, count=BATCH)
        cursor = answer[0]
        # Entries deleted meanwhile come back empty (and leave the pending list).
        entries = [e for e in answer[1] if e and e[1]]
        if entries:
            yield entries
        if cursor in (b"0-0", "0-0"):
            return


def acknowledge(client: redis.Redis, entries: list[Entry],
                quarantined: list[tuple[bytes, dict[bytes, bytes], str]]) -> None:
    """Dead-letter the refused entries (with the reason and their ID) and acknowledge
    the whole batch, in one MULTI: an entry is never acknowledged without its copy.
    Without refused entries, a plain XACK: a full Redis refuses any MULTI, but not an
    acknowledgement (and trimming what is acknowledged frees memory)."""
    ids = [e[0] for e in entries]
    if not quarantined:
        client.xack(protocol.INGEST_STREAM, protocol.INGEST_GROUP, *ids)
        return
    pipe = client.pipeline(transaction=True)
    for entry_id, fields, reason in quarantined:
        letter: dict[Any, Any] = {**fields, b"reason": reason, b"entry": entry_id}
        pipe.xadd(protocol.DEAD_LETTER_STREAM, letter,
                  maxlen=protocol.DEAD_LETTER_MAXLEN, approximate=True)
    pipe.xack(protocol.INGEST_STREAM, protocol.INGEST_GROUP, *ids)
    pipe.execute()


def committed_floor(client: redis.Redis) -> str | None:
    """The ID below which every entry is acknowledged: the oldest pending entry, else
    the one after the last delivered. None without our group (nothing is known).

    Two reads, the group's last delivered entry first: an entry delivered after that
    read has a larger ID, and if nothing is pending at the second read, every entry
    up to the first read's last delivered one is acknowledged. (Not one MULTI: a full
    Redis refuses every MULTI, and trimming is what frees its memory.)"""
    groups: Any = client.xinfo_groups(protocol.INGEST_STREAM)
    group = next((g for g in groups if _text(g["name"]) == protocol.INGEST_GROUP), None)
    if group is None:
        return None
    pending: Any = client.xpending(protocol.INGEST_STREAM, protocol.INGEST_GROUP)
    if pending["pending"]:
        return _text(pending["min"])
    ms, _, seq = _text(group["last-delivered-id"]).partition("-")
    return f"{ms}-{int(seq or 0) + 1}"


def trim_committed(client: redis.Redis) -> int:
    """Drop what is committed. XTRIM MINID rather than XDEL after each ack: one call
    now and then instead of one per batch, it frees whole stream nodes (XDEL only
    marks entries deleted until a node empties), and exact, so what stays in the
    stream is exactly what is not committed yet (see undrained_runs)."""
    floor = committed_floor(client)
    if floor is None:
        return 0
    return int(client.xtrim(protocol.INGEST_STREAM, minid=floor, approximate=False))


def undrained_runs(client: redis.Redis) -> set[str] | None:
    """Runs with an entry not committed yet: pending in some consumer (maybe a dead
    one) or not delivered at all. Conservative (acknowledged entries that follow a
    pending one count too); None when there are too many entries to tell."""
    floor = committed_floor(client)
    entries: Any = client.xrange(protocol.INGEST_STREAM, min=floor or "-",
                                 count=UNDRAINED_SCAN + 1)
    if len(entries) > UNDRAINED_SCAN:
        return None
    return {_text(fields.get(b"run", b"")) for _id, fields in entries}


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
