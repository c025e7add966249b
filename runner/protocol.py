"""What the gateway and the runner agree on: the task, its events, and Redis keys (the
task's signature: runner/task_signature.py).

Pure Python (no Django): the gateway imports this module too, so both sides sign,
name keys and count slots the same way.

Events: the runner appends every event to the run's own stream (live SSE, deltas
included) and every stored event (no deltas) to the shared ingest stream, which
the gateway drains into PostgreSQL exactly once (unique run + seq). Each entry, in
either stream, carries an HMAC of its run and event under the run's event key, which
the gateway derives from a secret of its own and hands to the runner inside the
signed task (sealed, see runner/task_seal.py): whoever can write to Redis but holds no
run's key cannot have an event stored, nor shown to the run's live readers. Entries
the gateway cannot store go to the dead-letter stream with the reason.

Slots: the gateway takes a slot when it accepts a run (so a start beyond the cap is
refused at once, never queued) and issues the slot's lease token, which travels
sealed in the task. The slot lives while its lease key (named by the token) does:
the runner renews it while the run lives and deletes it at the end; nobody without
the token can renew or free it, and only the gateway can take a slot (the runner's
Redis user may not write the gateway's index of slots nor read the tokens in it). A
lease that runs out means the runner may be gone: the gateway's reaper ends such a
run with `runner_lost` once its events have gone quiet too (runs/reaper.py).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal, Protocol

TASK_NAME: Final = "runner.execute_run"
QUEUE: Final = "runner"

INGEST_STREAM: Final = "kionga:events"
INGEST_GROUP: Final = "gateway"
# Ingest entries the gateway refused (unauthenticated, malformed, or refused by the
# database), with the reason; bounded, for an operator to inspect.
DEAD_LETTER_STREAM: Final = "kionga:events:dead"
DEAD_LETTER_MAXLEN: Final = 10_000
# The gateway's index of taken slots (run → when to look at its lease again) and each
# slot's lease token (run → token): only the gateway writes them, and the runner may
# only count the index (docker/redis-users.acl).
SLOTS_KEY: Final = "kionga:runner:slots"
# Parked runs (run → when to look at its lease again): runs waiting on a person, whose
# slot left SLOTS_KEY (and their project's share) while they wait; their lease stays
# in LEASES_KEY and is still renewed by the runner, so the reaper sees a dead runner
# as before (docs/decisions/parked-approval-runs.md). The gateway's alone, as the slots.
PARKED_KEY: Final = "kionga:runner:parked"
LEASES_KEY: Final = "kionga:runner:leases"
# A slot's lease: a key named by the token the gateway issued with the slot and sent
# to the runner sealed in the task; the runner renews it (PEXPIRE) and frees it (DEL),
# which it can do only for the runs whose token it was given.
LEASE_PREFIX: Final = "kionga:lease:"
LEASE_TOKEN_BYTES: Final = 24
# Redis must never evict: the runner's queue, the ingest stream, slots, claim and cancel
# keys all matter; memory is bounded by the live-stream bounds below instead
# (docs/decisions/redis-memory.md).
REDIS_MAXMEMORY_POLICY: Final = "noeviction"
RUNNER_INFO_KEY: Final = "kionga:runner:info"

# How long a slot lives without renewal: the first lease covers the wait in the
# queue; the runner then renews a shorter one every HEARTBEAT_SECONDS.
QUEUED_LEASE_SECONDS: Final = 30.0
RUNNING_LEASE_SECONDS: Final = 10.0
HEARTBEAT_SECONDS: Final = 2.0
# Live streams (written by runner/sink.py, best effort: the stored events are the
# record). Every write sets STREAM_TTL_SECONDS, so no live stream outlives its run by
# more than that; once the gateway has stored a run's end it keeps only the stream's
# last entry, for ENDED_STREAM_TTL_SECONDS (a late reader resumes from PostgreSQL).
STREAM_TTL_SECONDS: Final = 3600
ENDED_STREAM_TTL_SECONDS: Final = 60
STREAM_MAXLEN: Final = 20_000
# A run's live stream holds at most LIVE_STREAM_MAX_BYTES of Redis memory, each entry
# counted at what it may cost (live_entry_cost); the oldest entries go first.
LIVE_STREAM_MAX_BYTES: Final = 1024 * 1024
# A project's live streams together. A run's stream grows past LIVE_STREAM_PRESSED_BYTES
# only while the project's other streams leave it room to reach LIVE_STREAM_MAX_BYTES;
# otherwise the run is pressed: its deltas stay out of the live stream and the stream
# keeps its newest LIVE_STREAM_PRESSED_BYTES. Streams below that are not counted.
PROJECT_LIVE_MAX_BYTES: Final = 4 * 1024 * 1024
LIVE_STREAM_PRESSED_BYTES: Final = 64 * 1024
# A live entry is the event (`e`), or, for a stored event too large for the live
# stream, only its seq and type (`s`): readers take that event from the stored log.
LIVE_EVENT_FIELD: Final = b"e"
LIVE_STORED_ONLY_FIELD: Final = b"s"
LIVE_MAC_FIELD: Final = b"mac"
STORED_ONLY_MAC_PREFIX: Final = b"stored-only\n"
# What a live entry's MAC field adds to its size ("mac" and 64 hex digits, rounded up).
LIVE_MAC_COST: Final = 80
MIN_TOKEN_LENGTH: Final = 16

# The run vocabulary both sides speak: a run's statuses, and the terminal events that
# end it (exactly one, last), each with the status it leaves the run in.
RunStatus = Literal["queued", "running", "waiting", "completed", "failed", "cancelled"]
FinalStatus = Literal["completed", "failed", "cancelled"]
ACTIVE_STATUSES: Final[tuple[RunStatus, ...]] = ("queued", "running", "waiting")
FINAL_STATUSES: Final[tuple[FinalStatus, ...]] = ("completed", "failed", "cancelled")
TERMINAL_EVENTS: Final[dict[str, FinalStatus]] = {
    "run.completed": "completed", "run.failed": "failed", "run.cancelled": "cancelled",
}
TERMINAL_TYPES: Final = frozenset(TERMINAL_EVENTS)


def now_iso() -> str:
    """An event's `at`: UTC with microseconds and an offset."""
    return datetime.now(UTC).isoformat(timespec="microseconds")


def ending_event(type_: str, seq: int, *, reason: str, code: str | None = None,
                 message: str | None = None, tokens: int = 0) -> dict[str, Any]:
    """A terminal event written outside the engine (the runner before the graph starts,
    the gateway for a pre-start cancel or a lost runner); `code`/`message` add `error`."""
    if type_ not in TERMINAL_TYPES:
        raise ValueError(f"not a terminal event type: {type_!r}")
    event: dict[str, Any] = {"seq": seq, "type": type_, "at": now_iso(), "reason": reason,
                             "usage": {"tokens": tokens}}
    if code is not None:
        event["error"] = {"code": code, "message": message or code}
    return event


def run_stream(run_id: str) -> str:
    return f"kionga:run:{run_id}:events"


def live_entry_cost(size: int) -> int:
    """The most a live entry holding `size` bytes costs Redis (MEMORY USAGE, Redis 7 with
    jemalloc, measured over sizes from 20 B to 900 KB): small entries share a stream node
    at ~50 B each beside the value; larger ones may take nodes of their own, rounded up
    to the allocator's next size class (up to 25 %)."""
    return size + 64 if size < 256 else (size + 256) * 13 // 10 + 256


def live_bytes_key(project_id: int) -> str:
    """A project's live-stream bytes: run ID → "bytes:expiry" (see LIVE_BYTES_LUA)."""
    return f"kionga:live:{project_id}"


def cancel_key(run_id: str) -> str:
    return f"kionga:run:{run_id}:cancel"


# How many cancels were ever requested: every cancel key is set together with one INCR
# of it (request_cancel), so a runner's keeper polls this one key and reads its runs'
# cancel keys only when it moved, not every key of every run in flight each poll.
CANCELS_KEY: Final = "kionga:runner:cancels"


def request_cancel(pipe: Any, run_id: str, seconds: int) -> None:
    """Queue on `pipe` (a MULTI pipeline: the key and the count move together) what
    cancels a run: its cancel key, for `seconds`, and one more in CANCELS_KEY."""
    pipe.set(cancel_key(run_id), "1", ex=seconds)
    pipe.incr(CANCELS_KEY)


def claim_key(run_id: str) -> str:
    return f"kionga:run:{run_id}:claim"


def encode_event(event: dict[str, Any]) -> str:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))


def event_mac(key: bytes, run_id: str, encoded: bytes) -> str:
    """HMAC-SHA256 of one event entry (its run and its encoded event) under the run's
    event key, in the ingest stream and in the run's live stream alike. The run ID is
    covered too, so an entry cannot be replayed as another run's even if two runs
    shared a key."""
    message = run_id.encode("utf-8") + b"\n" + encoded
    return hmac.digest(key, message, hashlib.sha256).hex()


def event_mac_valid(key: bytes, run_id: str, encoded: bytes, mac: bytes) -> bool:
    return hmac.compare_digest(event_mac(key, run_id, encoded).encode("ascii"), mac)


def live_fields(key: bytes, run_id: str, encoded: bytes, *,
                stored_only: bool = False) -> dict[Any, Any]:
    """The fields of a run's live stream entry: the encoded event (or, `stored_only`,
    its seq and type only: runner/live.py) and its MAC (live readers drop an entry
    without the right one; typed loosely: redis-py's field mapping type is invariant)."""
    field = LIVE_STORED_ONLY_FIELD if stored_only else LIVE_EVENT_FIELD
    return {field: encoded, LIVE_MAC_FIELD: event_mac(key, run_id,
                                                      live_mac_message(encoded, stored_only))}


def live_mac_message(encoded: bytes, stored_only: bool) -> bytes:
    """What a live entry's MAC covers: a stub's is told apart from a whole event's, so
    neither can be passed off as the other."""
    return STORED_ONLY_MAC_PREFIX + encoded if stored_only else encoded


def ingest_fields(key: bytes, run_id: str, encoded: bytes) -> dict[Any, Any]:
    """The fields of an ingest stream entry: run ID, encoded event, its MAC."""
    return {"run": run_id, "e": encoded, "mac": event_mac(key, run_id, encoded)}


# A node record's entry in the ingest stream (runner/records.py) carries it in this field
# instead of "e"; its MAC covers this prefix too, so a record cannot pass for an event.
RECORD_FIELD: Final = "r"
_RECORD_MAC_PREFIX: Final = b"record\n"


def record_fields(key: bytes, run_id: str, encoded: bytes) -> dict[Any, Any]:
    """The fields of a node record's ingest entry: run ID, encoded record, its MAC."""
    return {"run": run_id, RECORD_FIELD: encoded,
            "mac": event_mac(key, run_id, _RECORD_MAC_PREFIX + encoded)}


def record_mac_valid(key: bytes, run_id: str, encoded: bytes, mac: bytes) -> bool:
    return event_mac_valid(key, run_id, _RECORD_MAC_PREFIX + encoded, mac)


class RedisLike(Protocol):
    def eval(self, script: str, numkeys: int, *keys_and_args: Any) -> Any: ...


class LeaseHolder(Protocol):
    """What the runner does with a run's lease key: renew it, delete it."""

    def pexpire(self, name: str, time: int) -> Any: ...

    def delete(self, *names: str) -> Any: ...


class SlotCounter(Protocol):
    def zcard(self, name: str) -> Any: ...


def lease_key(token: str) -> str:
    return LEASE_PREFIX + token


def new_lease_token() -> str:
    return secrets.token_urlsafe(LEASE_TOKEN_BYTES)


# Scripts read Redis's clock, so gateway and runner hosts need not agree on time.
_NOW: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
"""

# The gateway's slot functions (it alone may write SLOTS_KEY and LEASES_KEY).
# runner_cap: the runner's announced max_runs counts only within [1, configured]
# (RUNNER_INFO_KEY is the runner's to write: it may lower the cap, never raise it or
# stop every start). slot_check: whether run's slot lives, i.e. the lease key its token
# names still exists; a live index entry is looked at again when that lease would end,
# a dead one leaves the index.
SLOT_LUA: Final = """
local LEASE_PREFIX = '""" + LEASE_PREFIX + """'
local function runner_cap(info, configured)
  local announced = info and tonumber(redis.call('HGET', info, 'max_runs'))
  if announced and announced == math.floor(announced) and announced >= 1 then
    return math.min(announced, configured)
  end
  return configured
end
local function slot_check(slots, leases, run, now)
  local token = redis.call('HGET', leases, run)
  if token then
    local ms = redis.call('PTTL', LEASE_PREFIX .. token)
    if ms > 0 then
      redis.call('ZADD', slots, now + ms / 1000, run)
      return true
    end
    redis.call('DEL', LEASE_PREFIX .. token)  -- one without an expiry is no lease
  end
  redis.call('ZREM', slots, run)
  redis.call('HDEL', leases, run)
  return false
end
"""

# Taking a slot, as a Lua function so the gateway's admission script (runs.quota,
# with the API throttles) runs the same code. slots, leases: SLOTS_KEY, LEASES_KEY;
# share (or nil): a project's set of runs, of which at most share_max hold live slots
# (members whose slot is gone leave it; it expires share_ttl s after a start),
# share_max 0 meaning half the runner's slots (rounded up); info (or nil):
# RUNNER_INFO_KEY (runner_cap). The run's lease key, named by `token`, lives `lease` s.
# Entries are confirmed against their lease keys only when they might be dead (their
# lease's end passed) or when they would refuse the start (share or runner full): a
# slot the runner freed a moment ago is free for the next start, and the usual start
# stays a few commands. Counting and taking in one script: two concurrent starts never
# both take the last place. Returns {SLOT_TAKEN | RUNNER_FULL | SHARE_FULL, the
# runner's max_runs, the share's max}.
ACQUIRE_LUA: Final = SLOT_LUA + """
local function hold_slot(slots, leases, run, token, now, lease)
  local held = redis.call('HGET', leases, run)
  if held and held ~= token then redis.call('DEL', LEASE_PREFIX .. held) end
  redis.call('ZADD', slots, now + lease, run)
  redis.call('HSET', leases, run, token)
  redis.call('SET', LEASE_PREFIX .. token, run, 'PX', math.max(1, math.floor(lease * 1000)))
end
local function share_count(slots, leases, share, now, confirm)
  local mine = 0
  for _, member in ipairs(redis.call('SMEMBERS', share)) do
    local held = redis.call('ZSCORE', slots, member) ~= false
    if held and confirm then held = slot_check(slots, leases, member, now) end
    if held then mine = mine + 1 else redis.call('SREM', share, member) end
  end
  return mine
end
local function acquire_slot(slots, leases, share, info, run, token, max_runs, lease, share_max,
                            share_ttl)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
  max_runs = runner_cap(info, max_runs)
  if share and share_max <= 0 then share_max = math.max(1, math.floor((max_runs + 1) / 2)) end
  for _, member in ipairs(redis.call('ZRANGEBYSCORE', slots, '-inf', now)) do
    slot_check(slots, leases, member, now)
  end
  if redis.call('ZSCORE', slots, run) and slot_check(slots, leases, run, now) then
    hold_slot(slots, leases, run, token, now, lease)  -- the same run again: re-armed
    return {1, max_runs, share_max}
  end
  if share then
    local mine = share_count(slots, leases, share, now, false)
    if mine >= share_max then mine = share_count(slots, leases, share, now, true) end
    if mine >= share_max then return {-1, max_runs, share_max} end
  end
  if redis.call('ZCARD', slots) >= max_runs then
    for _, member in ipairs(redis.call('ZRANGE', slots, 0, -1)) do
      slot_check(slots, leases, member, now)
    end
    if redis.call('ZCARD', slots) >= max_runs then return {0, max_runs, share_max} end
  end
  hold_slot(slots, leases, run, token, now, lease)
  if share then
    redis.call('SADD', share, run)
    redis.call('EXPIRE', share, share_ttl)
  end
  return {1, max_runs, share_max}
end
"""
# The share and info keys travel in ARGV ('' for none): a gateway-only script on one
# Redis (runs.quota declares all its keys).
_ACQUIRE: Final = ACQUIRE_LUA + """
local share, info = nil, nil
if ARGV[6] ~= '' then share = ARGV[6] end
if ARGV[7] ~= '' then info = ARGV[7] end
return acquire_slot(KEYS[1], KEYS[2], share, info, ARGV[1], ARGV[2], tonumber(ARGV[3]),
                    tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[8]))
"""

_CAP: Final = SLOT_LUA + """
return runner_cap(KEYS[1], tonumber(ARGV[1]))
"""

# A slot lives while its lease key does: read it through the run's token.
# The runs in ARGV whose slot lease is gone (no lease, or it ran out), in ARGV's order.
_LAPSED: Final = """
local gone = {}
for _, run in ipairs(ARGV) do
  local token = redis.call('HGET', KEYS[1], run)
  if not (token and redis.call('PTTL', '""" + LEASE_PREFIX + """' .. token) > 0) then
    gone[#gone + 1] = run
  end
end
return gone
"""

_RELEASE: Final = """
for _, run in ipairs(ARGV) do
  local token = redis.call('HGET', KEYS[2], run)
  if token then redis.call('DEL', '""" + LEASE_PREFIX + """' .. token) end
  redis.call('HDEL', KEYS[2], run)
  redis.call('ZREM', KEYS[1], run)
  redis.call('ZREM', KEYS[3], run)
end
return #ARGV
"""

_SWEEP: Final = SLOT_LUA + _NOW + """
local dead = 0
for _, index in ipairs({KEYS[1], KEYS[3]}) do
  for _, run in ipairs(redis.call('ZRANGE', index, 0, -1)) do
    if not slot_check(index, KEYS[2], run, now) then dead = dead + 1 end
  end
end
return dead
"""

# Parking (gateway only). KEYS: slots, leases, the project's share, PARKED_KEY, the
# project's parked set. ARGV: run, the most parked runs, the project's most, the
# project sets' TTL. A run with a live slot leaves the slots and its share for the
# parked index (its lease untouched) unless its project already parks its most, or
# the runner does (parked members whose lease is gone are dropped first). Returns
# PARKED (already parked too), NOT_HELD (no live slot: nothing to park), PARK_FULL or
# PARK_PROJECT_FULL.
_PARK: Final = SLOT_LUA + _NOW + """
local slots, leases, share, parked, mine = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local run, max_parked, project_max = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if redis.call('ZSCORE', parked, run) then return 1 end
if not (redis.call('ZSCORE', slots, run) and slot_check(slots, leases, run, now)) then
  return 2
end
local count = 0
for _, member in ipairs(redis.call('SMEMBERS', mine)) do
  if redis.call('ZSCORE', parked, member) and slot_check(parked, leases, member, now) then
    count = count + 1
  else
    redis.call('SREM', mine, member)
  end
end
if count >= project_max then return -1 end
for _, member in ipairs(redis.call('ZRANGEBYSCORE', parked, '-inf', now)) do
  slot_check(parked, leases, member, now)
end
if redis.call('ZCARD', parked) >= max_parked then
  for _, member in ipairs(redis.call('ZRANGE', parked, 0, -1)) do
    slot_check(parked, leases, member, now)
  end
  if redis.call('ZCARD', parked) >= max_parked then return 0 end
end
redis.call('ZADD', parked, redis.call('ZSCORE', slots, run), run)
redis.call('ZREM', slots, run)
redis.call('SREM', share, run)
redis.call('SADD', mine, run)
redis.call('EXPIRE', mine, tonumber(ARGV[4]))
return 1
"""

# Unparking: the same KEYS; ARGV: run, the share's TTL. A parked run whose lease lives
# takes its slot back in the slots and its share, whatever they hold (a person decided:
# the run goes on; starts wait until the runner is below its cap again). Returns 1 if
# it did, else 0 (not parked, or its lease is gone: then it is forgotten).
_UNPARK: Final = _NOW + """
local slots, leases, share, parked, mine, run = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], ARGV[1]
if not redis.call('ZSCORE', parked, run) then return 0 end
redis.call('ZREM', parked, run)
redis.call('SREM', mine, run)
local token = redis.call('HGET', leases, run)
if token then
  local ms = redis.call('PTTL', '""" + LEASE_PREFIX + """' .. token)
  if ms > 0 then
    redis.call('ZADD', slots, now + ms / 1000, run)
    redis.call('SADD', share, run)
    redis.call('EXPIRE', share, tonumber(ARGV[2]))
    return 1
  end
  redis.call('DEL', '""" + LEASE_PREFIX + """' .. token)
end
redis.call('HDEL', leases, run)
return 0
"""

# A project's live bytes (live_bytes_key): sets what this run's live stream holds
# (ARGV[2]; 0 forgets the run) until Redis time + ARGV[3] s, drops runs whose record
# ran out, and returns what the project's other runs hold. The sink calls it in its
# MULTI (runner/sink.py); the gateway forgets a run once its end is stored.
LIVE_BYTES_LUA: Final = _NOW + """
local key, run, bytes, ttl = KEYS[1], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
if bytes > 0 then
  redis.call('HSET', key, run, bytes .. ':' .. math.floor(now + ttl))
  redis.call('EXPIRE', key, ttl)
else
  redis.call('HDEL', key, run)
end
local others = 0
local records = redis.call('HGETALL', key)
for i = 1, #records, 2 do
  if records[i] ~= run then
    local held, expiry = string.match(records[i + 1], '^(%d+):(%d+)$')
    if held and tonumber(expiry) > now then
      others = others + tonumber(held)
    else
      redis.call('HDEL', key, records[i])
    end
  end
end
return others
"""

SLOT_TAKEN, RUNNER_FULL, SHARE_FULL = 1, 0, -1  # what acquire_slot answers
PARKED, NOT_HELD, PARK_FULL, PARK_PROJECT_FULL = 1, 2, 0, -1  # what park_slot answers


@dataclass(frozen=True)
class Share:
    """A tenant's part of the slots: its runs' set, how many it may hold, the set's TTL."""

    key: str
    max_runs: int
    ttl_seconds: int


def acquire_slot(redis: RedisLike, run_id: str, max_runs: int,
                 lease_seconds: float = QUEUED_LEASE_SECONDS, share: Share | None = None,
                 *, token: str | None = None, info: str | None = None) -> int:
    """Take (or keep) a slot for run_id under the lease `token` (default: a new one):
    SLOT_TAKEN, or RUNNER_FULL when max_runs live slots are taken (`info`: the runner's
    announcement, within [1, max_runs]), or SHARE_FULL when `share` already holds its
    max_runs of them."""
    return int(redis.eval(
        _ACQUIRE, 2, SLOTS_KEY, LEASES_KEY, run_id, token or new_lease_token(), max_runs,
        lease_seconds, share.max_runs if share else 0, share.key if share else "", info or "",
        share.ttl_seconds if share else 0)[0])


def runner_cap(redis: RedisLike, configured: int) -> int:
    """The runner's cap: its announcement within [1, configured], else `configured`."""
    return int(redis.eval(_CAP, 1, RUNNER_INFO_KEY, configured))


def renew_lease(redis: LeaseHolder, token: str,
                lease_seconds: float = RUNNING_LEASE_SECONDS) -> bool:
    """Extend a run's lease (the runner, with the token it was given); False if it
    already ran out: a lease never comes back to life (the gateway may have reaped the run)."""
    return bool(redis.pexpire(lease_key(token), max(1, int(lease_seconds * 1000))))


def free_lease(redis: LeaseHolder, token: str) -> None:
    """The runner's end of a run: its slot is free for the gateway's next start."""
    redis.delete(lease_key(token))


def slot_alive(redis: RedisLike, run_id: str) -> bool:
    return not lapsed_slots(redis, [run_id])


def lapsed_slots(redis: RedisLike, run_ids: list[str]) -> list[str]:
    """Those of `run_ids` whose slot lease is gone, in their order: one round trip
    for all of them (the reaper asks about every active run each pass)."""
    if not run_ids:
        return []
    gone = redis.eval(_LAPSED, 1, LEASES_KEY, *run_ids)
    return [run.decode() if isinstance(run, bytes) else str(run) for run in gone]


def slots_in_use(redis: SlotCounter) -> int:
    """The slots the gateway holds for runs: taken and not yet seen free (the runner's
    /capacity may read only this count, ZCARD; the gateway's admissions and the events
    process's passes drop the entries whose lease is gone)."""
    return int(redis.zcard(SLOTS_KEY))


def sweep_slots(redis: RedisLike) -> int:
    """Drop the slots whose lease is gone (the gateway's periodic pass); how many."""
    return int(redis.eval(_SWEEP, 3, SLOTS_KEY, LEASES_KEY, PARKED_KEY))


def release_slot(redis: RedisLike, *run_ids: str) -> None:
    """Free the runs' slots (the gateway, when it ends runs itself)."""
    if run_ids:
        redis.eval(_RELEASE, 3, SLOTS_KEY, LEASES_KEY, PARKED_KEY, *run_ids)


@dataclass(frozen=True)
class Parking:
    """A tenant's parked runs: their set, how many it may park, how many the runner may."""

    key: str
    max_runs: int
    runner_max_runs: int


def park_slot(redis: RedisLike, run_id: str, share: Share, parking: Parking) -> int:
    """Take run_id's slot out of the slots and `share` while it waits on a person (its
    lease stays): PARKED, NOT_HELD (no live slot), PARK_PROJECT_FULL or PARK_FULL."""
    return int(redis.eval(_PARK, 5, SLOTS_KEY, LEASES_KEY, share.key, PARKED_KEY, parking.key,
                          run_id, parking.runner_max_runs, parking.max_runs, share.ttl_seconds))


def unpark_slot(redis: RedisLike, run_id: str, share: Share, parking: Parking) -> bool:
    """Give a parked run its slot back (in `share`); False if it was not parked or its
    lease is gone."""
    return bool(redis.eval(_UNPARK, 5, SLOTS_KEY, LEASES_KEY, share.key, PARKED_KEY,
                           parking.key, run_id, share.ttl_seconds))
