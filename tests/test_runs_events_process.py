"""The real `manage.py run_events` process: started after a predecessor died holding
entries, with a poisoned entry among good ones, it stores everything storable, fails
the poisoned run, and keeps running."""

from __future__ import annotations

import json
from typing import Any

import pytest

from runner import protocol
from runs import ingest_stream
from tests.ingest_helpers import (
    COMPLETE,
    Ingester,
    dead_letters,
    events,
    fields,
    make_run,
    send,
    seqs,
    status,
    until,
)
from tests.redis_kit import PrivateRedis

pytestmark = pytest.mark.django_db(transaction=True)


def test_it_recovers_a_dead_ingesters_entries_and_survives_poison(
        alice: Any, acme: Any, private_redis: PrivateRedis, ingester: Ingester) -> None:
    # A Redis of the test's own: no other session's ingester takes these entries.
    stream = private_redis.client()
    ingest_stream.ensure_group(stream)
    held, poisoned, plain = (make_run(alice, acme) for _ in range(3))
    sent = events(*COMPLETE)
    send(stream, held, sent)
    # The predecessor read these and was killed before acknowledging them.
    stream.xreadgroup(protocol.INGEST_GROUP, "killed-ingester", {protocol.INGEST_STREAM: ">"})
    send(stream, poisoned, sent[:1])
    # U+0000 as a JSON escape: valid JSON that PostgreSQL refuses (jsonb).
    nul = json.dumps({**sent[1], "node_id": "a\x00"}).encode()
    stream.xadd(protocol.INGEST_STREAM, fields(str(poisoned.pk), nul))
    send(stream, plain, sent)
    process = ingester(private_redis.url)
    until(lambda: status(held) == "completed" and status(plain) == "completed"
          and status(poisoned) == "failed", process, 30)
    assert seqs(held) == seqs(plain) == [0, 1, 2, 3]
    assert seqs(poisoned) == [0, 1]
    later = make_run(alice, acme)
    send(stream, later, sent)
    until(lambda: status(later) == "completed", process, 30)
    until(lambda: stream.xlen(protocol.INGEST_STREAM) == 0, process, 30)  # trimmed
    [letter] = dead_letters(stream)
    assert letter[b"reason"] == b"refused_by_database"
