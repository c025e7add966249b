"""Sustained load through one runner: N signed runs, at most 8 in flight, each started
as soon as a slot frees up (as the gateway does). Shared by the load test, which checks
that every run ends well, and bench/runner.py, which times it."""

from __future__ import annotations

import json
import time
from typing import Any

import redis
from celery import Celery

from runner import protocol
from tests.runner_process.runner_kit import TERMINAL, payload, send, slot_for

IN_FLIGHT = 8


def run_many(rds: redis.Redis, app: Celery, graph: dict[str, Any], runs: int,
             guard_seconds: float = 120) -> dict[str, int]:
    """Send `runs` runs through the runner; returns how many ended with each terminal type."""
    info: Any = rds.xinfo_stream(protocol.INGEST_STREAM)
    last = info["last-generated-id"]
    started = time.monotonic()
    sent = 0
    ended: dict[str, int] = {}
    while sum(ended.values()) < runs:
        while sent < runs and sent - sum(ended.values()) < IN_FLIGHT:
            body = payload(graph)
            if not slot_for(rds, body, IN_FLIGHT):
                break  # the slot of a finished run is not freed yet
            send(app, rds, body, take_slot=False)
            sent += 1
        answer: Any = rds.xread({protocol.INGEST_STREAM: last}, block=100, count=1000)
        for _stream, entries in answer or []:
            for entry_id, fields in entries:
                last = entry_id
                if b"e" not in fields:
                    continue  # a node record, not an event
                event = json.loads(fields[b"e"])
                if event["type"] in TERMINAL:
                    ended[event["type"]] = ended.get(event["type"], 0) + 1
        # A hang guard, not a speed check: speed is bench/runner.py's business.
        assert time.monotonic() - started < guard_seconds, f"stuck after {ended}"
    return ended
