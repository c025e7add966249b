"""Drain run events from Redis into PostgreSQL: every stored event exactly once, in order.

The runner appends stored events to one shared stream; this consumer group reads
them in batches, inserts them (unique run + seq, so a redelivered entry is a no-op),
applies them to their runs and only then acknowledges them. Entries another
consumer left pending (it died) are claimed after IDLE_CLAIM_MS.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import uuid
from collections import defaultdict
from typing import Any

import redis
from django.db import transaction

from runner import protocol
from runs.lifecycle import apply_event, do_finish_runs
from runs.models import FINAL_STATUSES, Run, RunEvent

log = logging.getLogger(__name__)

BATCH = 500
IDLE_CLAIM_MS = 30_000

Entry = tuple[bytes, dict[bytes, bytes]]


def consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


def ensure_group(client: redis.Redis) -> None:
    try:
        client.xgroup_create(protocol.INGEST_STREAM, protocol.INGEST_GROUP, id="0",
                             mkstream=True)
    except redis.ResponseError as exc:
        if "BUSYGROUP" not in str(exc):
            raise


def read_batch(client: redis.Redis, consumer: str, block_ms: int,
               reclaim: bool = True) -> list[Entry]:
    """New entries for this consumer, or (with `reclaim`) entries other consumers left
    behind: the loop asks for those only now and then, it costs a round trip."""
    if reclaim:
        claimed_answer: Any = client.xautoclaim(protocol.INGEST_STREAM, protocol.INGEST_GROUP,
                                               consumer, IDLE_CLAIM_MS, "0-0", count=BATCH)
        claimed = [e for e in claimed_answer[1] if e and e[1]]
        if claimed:
            return claimed
    answer: Any = client.xreadgroup(protocol.INGEST_GROUP, consumer, {protocol.INGEST_STREAM: ">"},
                               count=BATCH, block=block_ms)
    return [entry for _stream, entries in answer or [] for entry in entries]


def store_entries(entries: list[Entry]) -> int:
    """Store the events of `entries` and apply them to their runs; returns rows inserted."""
    by_run: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for _id, fields in entries:
        decoded = _decode(fields)
        if decoded is not None:
            by_run[decoded[0]].append(decoded[1])
    # One transaction (one durable commit) for the whole batch, whatever its runs:
    # commits, not rows, are what a busy ingester pays for.
    with transaction.atomic():
        runs = Run.objects.select_for_update().in_bulk(list(by_run))
        rows: list[RunEvent] = []
        ended: list[Run] = []
        for run_id, events in by_run.items():
            run = runs.get(_uuid(run_id))
            if run is None or run.status in FINAL_STATUSES:
                # Pruned, unknown, or already ended (e.g. reaped as runner_lost):
                # nothing may follow a terminal event.
                continue
            rows += _apply(run, sorted(events, key=lambda e: e["seq"]))
            if run.status in FINAL_STATUSES:
                ended.append(run)
        RunEvent.objects.bulk_create(rows, ignore_conflicts=True)
        do_finish_runs(ended)
    return len(rows)


def _apply(run: Run, events: list[dict[str, Any]]) -> list[RunEvent]:
    changed: set[str] = set()
    for event in events:
        changed.update(apply_event(run, event))
    if changed:
        run.save(update_fields=sorted(changed))
    return [RunEvent(run=run, seq=e["seq"], type=e["type"], data=e) for e in events]


def _uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(value)
    except ValueError:
        return None


def _decode(fields: dict[bytes, bytes]) -> tuple[str, dict[str, Any]] | None:
    """(run id, event) of an ingest entry, or None (logged) for a malformed one."""
    try:
        event = json.loads(fields[b"e"])
        run_id = fields[b"run"].decode()
    except (KeyError, ValueError, UnicodeDecodeError):
        log.warning("skipping a malformed event entry")
        return None
    if not isinstance(event, dict) or type(event.get("seq")) is not int:
        log.warning("skipping an event without seq")
        return None
    return run_id, event


def drain_once(client: redis.Redis, consumer: str, block_ms: int = 100,
               reclaim: bool = True) -> int:
    entries = read_batch(client, consumer, block_ms, reclaim)
    if not entries:
        return 0
    store_entries(entries)
    client.xack(protocol.INGEST_STREAM, protocol.INGEST_GROUP, *[e[0] for e in entries])
    return len(entries)
