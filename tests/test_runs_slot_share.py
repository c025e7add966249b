"""runner.protocol.acquire_slot: one script takes a slot, with or without a project's share."""

from __future__ import annotations

import redis

from runner import protocol
from runner.protocol import RUNNER_FULL, SHARE_FULL, SLOT_TAKEN, Share

SHARE = Share("kionga:project:test-share:runs", max_runs=2, ttl_seconds=60)


def take(rds: redis.Redis, run_id: str, max_runs: int = 3, share: Share | None = SHARE) -> int:
    return protocol.acquire_slot(rds, run_id, max_runs, 10, share)


def test_a_share_holds_at_most_its_runs(rds: redis.Redis) -> None:
    rds.delete(SHARE.key)
    assert [take(rds, "a"), take(rds, "b"), take(rds, "c")] == [SLOT_TAKEN, SLOT_TAKEN,
                                                                 SHARE_FULL]
    assert take(rds, "a") == SLOT_TAKEN  # a run keeps its own slot
    assert 0 < rds.ttl(SHARE.key) <= 60
    assert take(rds, "x", share=None) == SLOT_TAKEN  # another tenant: the runner is full now
    assert take(rds, "y", share=None) == RUNNER_FULL
    assert protocol.slots_in_use(rds) == 3


def test_a_share_forgets_runs_whose_slot_is_gone(rds: redis.Redis) -> None:
    rds.delete(SHARE.key)
    assert take(rds, "a") == take(rds, "b") == SLOT_TAKEN
    protocol.release_slot(rds, "a")
    assert take(rds, "c") == SLOT_TAKEN
    assert rds.smembers(SHARE.key) == {b"b", b"c"}
