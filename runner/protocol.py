"""What the gateway and the runner agree on: the task, its signature, and Redis keys.

Pure Python (no Django): the gateway imports this module too, so both sides sign,
name keys and count slots the same way.

Events: the runner appends every event to the run's own stream (live SSE, deltas
included) and every stored event (no deltas) to the shared ingest stream, which
the gateway drains into PostgreSQL exactly once (unique run + seq). Each ingest
entry carries an HMAC of its run and event under the run's event key, which the
gateway derives from a secret of its own and hands to the runner inside the signed
task (sealed, see runner/task_seal.py): whoever can write to Redis but holds no
run's key cannot have an event stored. Entries the gateway cannot store go to the
dead-letter stream with the reason.

Slots: a sorted set of run IDs scored by lease expiry (Redis server time). The
gateway takes a slot when it accepts a run (so a start beyond the cap is refused
at once, never queued), the runner renews it while the run lives and frees it at
the end. A lease that runs out means the runner is gone: the gateway's reaper ends
such a run with `runner_lost`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Literal, Protocol

from contracts.hashing import canonical_json

TASK_NAME: Final = "runner.execute_run"
QUEUE: Final = "runner"

INGEST_STREAM: Final = "kionga:events"
INGEST_GROUP: Final = "gateway"
# Ingest entries the gateway refused (unauthenticated, malformed, or refused by the
# database), with the reason; bounded, for an operator to inspect.
DEAD_LETTER_STREAM: Final = "kionga:events:dead"
DEAD_LETTER_MAXLEN: Final = 10_000
SLOTS_KEY: Final = "kionga:runner:slots"
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


def claim_key(run_id: str) -> str:
    return f"kionga:run:{run_id}:claim"


def sign(payload: dict[str, Any], token: str) -> str:
    """HMAC-SHA256 of the payload's canonical JSON, keyed with the runner token."""
    message = canonical_json(payload).encode("utf-8")
    return hmac.new(token.encode("utf-8"), message, hashlib.sha256).hexdigest()


def verify(payload: Any, signature: Any, token: str) -> bool:
    if not isinstance(payload, dict) or not isinstance(signature, str):
        return False
    return hmac.compare_digest(sign(payload, token), signature)


def encode_event(event: dict[str, Any]) -> str:
    return json.dumps(event, ensure_ascii=False, separators=(",", ":"))


def event_mac(key: bytes, run_id: str, encoded: bytes) -> str:
    """HMAC-SHA256 of one ingest entry (its run and its encoded event) under the
    run's event key. The run ID is covered too, so an entry cannot be replayed as
    another run's even if two runs shared a key."""
    message = run_id.encode("utf-8") + b"\n" + encoded
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def event_mac_valid(key: bytes, run_id: str, encoded: bytes, mac: bytes) -> bool:
    return hmac.compare_digest(event_mac(key, run_id, encoded).encode("ascii"), mac)


def ingest_fields(key: bytes, run_id: str, encoded: bytes) -> dict[Any, Any]:
    """The fields of an ingest stream entry: run ID, encoded event, its MAC (typed
    loosely: redis-py's field mapping type is invariant)."""
    return {"run": run_id, "e": encoded, "mac": event_mac(key, run_id, encoded)}


class RedisLike(Protocol):
    def eval(self, script: str, numkeys: int, *keys_and_args: Any) -> Any: ...


# Every script reads Redis's clock, so gateway and runner hosts need not agree on time.
_NOW: Final = """
local t = redis.call('TIME')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
"""

# Taking a slot, as a Lua function so the gateway's admission script (runs.quota,
# with the API throttles) runs the same code. slots: SLOTS_KEY; share (or nil): a
# project's set of runs, of which at most share_max hold live slots (members whose slot
# is gone leave it; it expires share_ttl s after a start), share_max 0 meaning half the
# runner's slots (rounded up); info (or nil): RUNNER_INFO_KEY, whose announced
# max_runs wins over max_runs. Counting and taking in one script: two concurrent starts
# never both take the last place. Returns {SLOT_TAKEN | RUNNER_FULL | SHARE_FULL, the
# runner's max_runs, the share's max}.
ACQUIRE_LUA: Final = """
local function acquire_slot(slots, share, info, run, max_runs, lease, share_max, share_ttl)
  local t = redis.call('TIME')
  local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
  if info then
    local announced = tonumber(redis.call('HGET', info, 'max_runs'))
    if announced and announced == math.floor(announced) then max_runs = announced end
  end
  if share and share_max <= 0 then share_max = math.max(1, math.floor((max_runs + 1) / 2)) end
  redis.call('ZREMRANGEBYSCORE', slots, '-inf', now)
  if redis.call('ZSCORE', slots, run) then
    redis.call('ZADD', slots, now + lease, run)
    return {1, max_runs, share_max}
  end
  if share then
    local mine = 0
    for _, member in ipairs(redis.call('SMEMBERS', share)) do
      if redis.call('ZSCORE', slots, member) then
        mine = mine + 1
      else
        redis.call('SREM', share, member)
      end
    end
    if mine >= share_max then return {-1, max_runs, share_max} end
  end
  if redis.call('ZCARD', slots) >= max_runs then return {0, max_runs, share_max} end
  redis.call('ZADD', slots, now + lease, run)
  if share then
    redis.call('SADD', share, run)
    redis.call('EXPIRE', share, share_ttl)
  end
  return {1, max_runs, share_max}
end
"""
_ACQUIRE: Final = ACQUIRE_LUA + """
return acquire_slot(KEYS[1], KEYS[2], KEYS[3], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]),
                    tonumber(ARGV[4] or 0), tonumber(ARGV[5] or 0))
"""

# Only a live lease is renewed: one that ran out stays dead even before anyone purged
# it, so a run the reaper already judged lost cannot come back to life.
_RENEW: Final = _NOW + """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) > now then
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
  return 1
end
return 0
"""

_ALIVE: Final = _NOW + """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
if score and tonumber(score) > now then return 1 end
return 0
"""

_IN_USE: Final = _NOW + """
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
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


@dataclass(frozen=True)
class Share:
    """A tenant's part of the slots: its runs' set, how many it may hold, the set's TTL."""

    key: str
    max_runs: int
    ttl_seconds: int


def acquire_slot(redis: RedisLike, run_id: str, max_runs: int,
                 lease_seconds: float = QUEUED_LEASE_SECONDS, share: Share | None = None) -> int:
    """Take (or keep) a slot for run_id: SLOT_TAKEN, or RUNNER_FULL when max_runs live
    slots are taken, or SHARE_FULL when `share` already holds its max_runs of them."""
    if share is None:
        return int(redis.eval(_ACQUIRE, 1, SLOTS_KEY, run_id, max_runs, lease_seconds)[0])
    return int(redis.eval(_ACQUIRE, 2, SLOTS_KEY, share.key, run_id, max_runs, lease_seconds,
                          share.max_runs, share.ttl_seconds)[0])


def renew_slot(redis: RedisLike, run_id: str,
               lease_seconds: float = RUNNING_LEASE_SECONDS) -> bool:
    """Extend a slot's lease; False if it already expired (the gateway may have reaped it)."""
    return bool(redis.eval(_RENEW, 1, SLOTS_KEY, run_id, lease_seconds))


def slot_alive(redis: RedisLike, run_id: str) -> bool:
    return bool(redis.eval(_ALIVE, 1, SLOTS_KEY, run_id))


def slots_in_use(redis: RedisLike) -> int:
    return int(redis.eval(_IN_USE, 1, SLOTS_KEY))


def release_slot(redis: RedisLike, *run_ids: str) -> None:
    """Free the runs' slots (the runner when a run's last event is in Redis; the
    gateway when it ends runs itself)."""
    if run_ids:
        redis.eval("return redis.call('ZREM', KEYS[1], unpack(ARGV))", 1, SLOTS_KEY, *run_ids)
