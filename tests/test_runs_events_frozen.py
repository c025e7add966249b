"""The events ingester moves what start-up made out of the cyclic collector's sight
before its loop (runner/heap.py): a full collection then walks only what its batches
made, instead of everything imported, while no event is stored."""

from __future__ import annotations

import gc
import signal
from typing import Any

import pytest
import redis

from runs import ingest_stream
from runs.management.commands.run_events import Command

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_ingester_has_frozen_what_start_up_made_when_its_loop_begins(
        monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, int] = {}

    def one_turn(self: Command, client: redis.Redis, consumer: str, next_reap: float,
                 every: float) -> float:
        seen["frozen"] = gc.get_freeze_count()
        self.stopping = True
        return next_reap

    monkeypatch.setattr(Command, "_loop_once", one_turn)
    # The test Redis has no maxmemory; the warning is not this test's subject.
    monkeypatch.setattr(ingest_stream, "warn_if_redis_evicts", lambda client: None)
    handlers: dict[int, Any] = {sig: signal.getsignal(sig)
                                for sig in (signal.SIGTERM, signal.SIGINT)}
    gc.unfreeze()
    try:
        Command().handle(reap_every=1.0)
    finally:
        gc.unfreeze()  # this test process's objects back in the collector's sight
        for sig, handler in handlers.items():
            signal.signal(sig, handler)
    assert seen["frozen"] > 50_000  # Django and every app
