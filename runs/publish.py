"""Events the gateway writes itself (a cancel before pickup, runner_lost) go where the
runner writes its own, so live readers and the ingester see them the same way."""

from __future__ import annotations

from typing import Any

import redis

from runner import protocol
from runs.event_keys import ingest_fields, live_fields


def publish_event(client: redis.Redis, run_id: str, event: dict[str, Any], *,
                  store: bool) -> None:
    """One round trip: the run's live stream, the ingest stream when the ingester is
    to store it (`store`), and the stream's TTL. These are endings: the live stream
    keeps only this one (a reader still following it takes what it missed from the
    stored log), for the ended stream's TTL once it is stored (`store` False), else
    for a live stream's, until the ingester stores it (runs/live_streams.py). The
    ingester does not free the slot of a run it ends from the stream: a caller that
    stores an ending frees the slot itself (runs.cancel)."""
    encoded = protocol.encode_event(event).encode("utf-8")
    stream = protocol.run_stream(run_id)
    pipe = client.pipeline(transaction=False)
    pipe.xadd(stream, live_fields(run_id, encoded), maxlen=1, approximate=False)
    if store:
        pipe.xadd(protocol.INGEST_STREAM, ingest_fields(run_id, encoded))
    pipe.expire(stream, protocol.STREAM_TTL_SECONDS if store
                else protocol.ENDED_STREAM_TTL_SECONDS)
    pipe.execute()
