"""The real `manage.py run_events` process rides out whatever Redis answers: full
(OutOfMemoryError), a command
refused (a wrong type at the ingest stream's key), gone and back empty (a restart
without persistence). It stays up, says so at ERROR with the reason, waits with a
capped exponential backoff, and stores events again by itself once Redis is back."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from runner import protocol
from runs import ingest_stream
from tests.ingest_helpers import COMPLETE, Ingester, events, make_run, send, seqs, status, until
from tests.redis_kit import PrivateRedis

pytestmark = pytest.mark.django_db(transaction=True)


def _log(tmp_path: Path) -> str:
    return (tmp_path / "events.log").read_text(errors="replace")


def test_it_stores_while_redis_is_full_and_after(
        alice: Any, acme: Any, private_redis: PrivateRedis, ingester: Ingester,
        tmp_path: Path) -> None:
    # The reaper's refused writes while full are tested on their own
    # (test_runs_reaper_redis_errors.py): here, another test's stack may run an `events`
    # process on the same database and reap a lost run first.
    client = private_redis.client()
    ingest_stream.ensure_group(client)
    sent = events(*COMPLETE)
    before = make_run(alice, acme)
    send(client, before, sent)
    private_redis.fill()  # from here every write that needs memory is refused
    process = ingester(private_redis.url)
    # Reading, storing and acknowledging need no memory: events are still stored.
    until(lambda: status(before) == "completed", process, 30)
    time.sleep(1.5)  # more passes of the loop, Redis still full
    assert process.poll() is None
    private_redis.free()
    after = make_run(alice, acme)
    send(client, after, sent)
    until(lambda: status(after) == "completed", process, 30)
    assert seqs(before) == seqs(after) == [0, 1, 2, 3]


def test_it_waits_out_a_refused_command_with_a_capped_backoff(
        alice: Any, acme: Any, private_redis: PrivateRedis, ingester: Ingester,
        tmp_path: Path) -> None:
    client = private_redis.client()
    client.set(protocol.INGEST_STREAM, "not a stream")  # WRONGTYPE for every stream command
    process = ingester(private_redis.url)
    until(lambda: _log(tmp_path).count("WRONGTYPE") >= 3, process, 30)
    waits = [line.rsplit("retrying in ", 1)[1] for line in _log(tmp_path).splitlines()
             if line.startswith("ERROR ") and "ResponseError: WRONGTYPE" in line]
    assert waits[:3] == ["0.5 s", "1.0 s", "2.0 s"]  # doubling, from 0.5 s (capped at 8)
    client.delete(protocol.INGEST_STREAM)
    run = make_run(alice, acme)
    until(lambda: client.exists(protocol.INGEST_STREAM) == 1, process, 30)  # group recreated
    send(client, run, events(*COMPLETE))
    until(lambda: status(run) == "completed", process, 30)


def test_it_stores_events_again_after_redis_restarts_empty(
        alice: Any, acme: Any, private_redis: PrivateRedis, ingester: Ingester,
        tmp_path: Path) -> None:
    client = private_redis.client()
    process = ingester(private_redis.url)
    first = make_run(alice, acme)
    until(lambda: client.exists(protocol.INGEST_STREAM) == 1, process, 30)
    send(client, first, events(*COMPLETE))
    until(lambda: status(first) == "completed", process, 30)
    private_redis.stop()
    until(lambda: "ERROR runs.management.commands.run_events: Redis failed (ConnectionError"
          in _log(tmp_path), process, 30)
    time.sleep(1.0)  # down a while: more failures, longer waits
    private_redis.start()  # same port, nothing kept: no stream, no group
    second = make_run(alice, acme)
    until(lambda: client.exists(protocol.INGEST_STREAM) == 1, process, 30)
    send(client, second, events(*COMPLETE))
    until(lambda: status(second) == "completed", process, 30)
    assert seqs(second) == [0, 1, 2, 3]
