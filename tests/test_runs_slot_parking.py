"""runner.protocol.park_slot / unpark_slot: a run waiting on a person holds no slot.

Its project at its share (and the runner at its cap) with parked runs still starts new
ones; a parked run's lease stays (the reaper's signal), it gets its slot back when the
wait ends, and the parked runs are bounded per project and across the runner.
"""

from __future__ import annotations

import redis

from runner import protocol
from runner.protocol import (
    PARK_FULL,
    PARK_PROJECT_FULL,
    PARKED,
    SHARE_FULL,
    SLOT_TAKEN,
    Parking,
    Share,
)

SHARE = Share("kionga:project:test-park:runs", max_runs=2, ttl_seconds=60)
OTHER = Share("kionga:project:test-park-other:runs", max_runs=2, ttl_seconds=60)
PARKING = Parking("kionga:project:test-park:parked", max_runs=2, runner_max_runs=3)
OTHER_PARKING = Parking("kionga:project:test-park-other:parked", max_runs=2, runner_max_runs=3)


def clear(rds: redis.Redis) -> None:
    rds.delete(SHARE.key, OTHER.key, PARKING.key, OTHER_PARKING.key)


def take(rds: redis.Redis, run_id: str, share: Share = SHARE) -> int:
    return protocol.acquire_slot(rds, run_id, 3, 10, share)


def test_a_parked_run_frees_its_slot_and_share_and_keeps_its_lease(rds: redis.Redis) -> None:
    clear(rds)
    assert [take(rds, "a"), take(rds, "b"), take(rds, "c")] == [SLOT_TAKEN, SLOT_TAKEN,
                                                                 SHARE_FULL]
    assert protocol.park_slot(rds, "a", SHARE, PARKING) == PARKED
    assert protocol.park_slot(rds, "a", SHARE, PARKING) == PARKED  # again: no change
    assert protocol.slots_in_use(rds) == 1
    assert protocol.slot_alive(rds, "a")  # the reaper still sees its lease
    assert take(rds, "c") == SLOT_TAKEN  # the project at its share starts again
    assert protocol.park_slot(rds, "b", SHARE, PARKING) == PARKED
    assert take(rds, "d") == SLOT_TAKEN
    # Back from the wait: the slot returns even past the share (starts wait meanwhile).
    assert protocol.unpark_slot(rds, "a", SHARE, PARKING)
    assert not protocol.unpark_slot(rds, "a", SHARE, PARKING)
    assert protocol.slots_in_use(rds) == 3
    assert take(rds, "e") == SHARE_FULL
    assert rds.smembers(SHARE.key) == {b"a", b"c", b"d"}


def test_parked_runs_are_bounded_per_project_and_across_the_runner(rds: redis.Redis) -> None:
    clear(rds)
    for run in ("a", "b"):
        assert take(rds, run) == SLOT_TAKEN
        assert protocol.park_slot(rds, run, SHARE, PARKING) == PARKED
    assert take(rds, "c") == SLOT_TAKEN
    assert protocol.park_slot(rds, "c", SHARE, PARKING) == PARK_PROJECT_FULL
    assert protocol.slots_in_use(rds) == 1  # refused: c keeps its slot
    assert take(rds, "x", OTHER) == take(rds, "y", OTHER) == SLOT_TAKEN
    assert protocol.park_slot(rds, "x", OTHER, OTHER_PARKING) == PARKED
    assert protocol.park_slot(rds, "y", OTHER, OTHER_PARKING) == PARK_FULL  # 3 parked
    protocol.release_slot(rds, "a")  # a parked run ended: its place is free again
    assert protocol.park_slot(rds, "y", OTHER, OTHER_PARKING) == PARKED


def test_a_parked_run_whose_lease_ran_out_is_forgotten(rds: redis.Redis) -> None:
    clear(rds)
    assert protocol.acquire_slot(rds, "a", 3, 0.05, SHARE) == SLOT_TAKEN
    assert protocol.park_slot(rds, "a", SHARE, PARKING) == PARKED
    rds.delete(*rds.keys(protocol.LEASE_PREFIX + "*"))  # the runner died (or freed it)
    assert not protocol.slot_alive(rds, "a")  # what the reaper looks at
    assert protocol.sweep_slots(rds) == 1
    assert rds.zcard(protocol.PARKED_KEY) == 0 and not rds.hexists(protocol.LEASES_KEY, "a")
    assert not protocol.unpark_slot(rds, "a", SHARE, PARKING)
    assert protocol.slots_in_use(rds) == 0


def test_a_run_without_a_slot_is_not_parked(rds: redis.Redis) -> None:
    clear(rds)
    assert protocol.park_slot(rds, "turn", SHARE, PARKING) == protocol.NOT_HELD
    assert rds.zcard(protocol.PARKED_KEY) == 0
