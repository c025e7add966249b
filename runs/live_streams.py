"""What Redis holds for runs that ended: once an ending is stored, the live stream is
no longer needed to follow the run (the stored events are the record).

After the commit that stores a run's end, its live stream keeps only its last entry
(its ending, as a rule: a reader still following the stream gets it and takes what
it missed from PostgreSQL, runs/sse.py) — its deltas and the copies of its stored
events are gone — for protocol.ENDED_STREAM_TTL_SECONDS, and the run leaves its
project's live-bytes account (runner/live.py). Runs the gateway ended itself also
give their slot back. All best effort: Redis refusing (full, restarting) is logged
and never undoes or stops anything; the stream then expires by its own TTL, the slot
with its lease and the account entry with its record.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

import redis

from kionga.redis_client import sync_redis
from runner import protocol
from runs.models import Run

log = logging.getLogger(__name__)


def after_runs_ended(runs: Iterable[Run], *, free_slots: bool) -> None:
    """Call after the commit that stored the runs' ends (transaction.on_commit)."""
    ended = [(str(run.pk), run.project_id) for run in runs if run.agent_id is None]
    if not ended:  # a deployed agent's turns have no live stream and no slot
        return
    try:
        pipe = sync_redis().pipeline(transaction=False)
        for run_id, project_id in ended:
            stream = protocol.run_stream(run_id)
            pipe.xtrim(stream, maxlen=1, approximate=False)
            pipe.expire(stream, protocol.ENDED_STREAM_TTL_SECONDS)
            pipe.hdel(protocol.live_bytes_key(project_id), run_id)
        pipe.execute()
        if free_slots:  # the gateway ended them (reaper, event_rejected): their slots too
            protocol.release_slot(sync_redis(), *(run_id for run_id, _ in ended))
    except redis.RedisError as exc:
        log.error("Redis refused the after-end writes of %d runs (%s: %s); their live "
                  "streams expire by their TTL and their slots with their leases",
                  len(ended), type(exc).__name__, exc)
