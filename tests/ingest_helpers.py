"""Helpers for the ingester tests: runs, signed ingest entries, a clean ingest stream."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
import redis
from django.utils import timezone

from kionga.redis_client import sync_redis
from runner import protocol
from runs import ingest, ingest_stream
from runs.event_keys import event_key
from runs.models import Run
from tests.designs_helpers import make_design

AT = "2026-11-30T10:00:00.000+00:00"


@pytest.fixture
def stream() -> Iterator[redis.Redis]:
    """The gateway's Redis with an empty ingest stream (and group) and dead-letter stream."""
    client = sync_redis()
    client.delete(protocol.INGEST_STREAM, protocol.DEAD_LETTER_STREAM)
    ingest_stream.ensure_group(client)
    yield client
    client.delete(protocol.INGEST_STREAM, protocol.DEAD_LETTER_STREAM)


def make_run(user: Any, project: Any, design: Any = None, status: str = "queued") -> Run:
    """A run no reaper takes for lost: created "tomorrow", so another events process
    on this test database (the e2e stack's, which cannot see this Redis) leaves it
    alone; tests name the runs they want reaped."""
    run = Run.objects.create(project=project, design=design or make_design(user, project),
                             revision=1, content_sha256="x" * 64, created_by=user,
                             status=status)
    Run.objects.filter(pk=run.pk).update(created_at=timezone.now() + timedelta(days=1))
    return run


def events(*kinds: str) -> list[dict[str, Any]]:
    """Events of the given types with seqs 0, 1, ...; a run.completed carries an output."""
    made = []
    for seq, kind in enumerate(kinds):
        event: dict[str, Any] = {"seq": seq, "type": kind, "at": AT}
        if kind == "run.completed":
            event.update(output="done", usage={"tokens": 7})
        if kind == "node.started":
            event.update(node_id="input", attempt=1)
        made.append(event)
    return made


def fields(run_id: str, event: dict[str, Any] | bytes, key: bytes | None = None) -> dict[Any, Any]:
    """An ingest entry's fields as the run's runner writes them (its key unless `key`)."""
    encoded = event if isinstance(event, bytes) else protocol.encode_event(event).encode()
    return protocol.ingest_fields(event_key(run_id) if key is None else key, run_id, encoded)


def entries(run: Run, sent: list[dict[str, Any]]) -> list[ingest.Entry]:
    """Entries as read from the stream (IDs made up), for store_entries."""
    return [(f"{i}-0".encode(), {k.encode(): v if isinstance(v, bytes) else v.encode()
                                 for k, v in fields(str(run.pk), e).items()})
            for i, e in enumerate(sent, 1)]


def send(client: redis.Redis, run: Run | str, sent: list[dict[str, Any]]) -> None:
    run_id = str(run.pk) if isinstance(run, Run) else run
    for event in sent:
        client.xadd(protocol.INGEST_STREAM, fields(run_id, event))


def drain(client: redis.Redis, consumer: str = "test") -> None:
    while ingest.drain_once(client, consumer, block_ms=20):
        pass


def seqs(run: Run) -> list[int]:
    return list(run.events.order_by("seq").values_list("seq", flat=True))


def dead_letters(client: redis.Redis) -> list[dict[bytes, bytes]]:
    letters: Any = client.xrange(protocol.DEAD_LETTER_STREAM)
    return [letter for _id, letter in letters]
