"""The start of a run task in one Redis round trip: claim it, renew its slot lease,
look for a cancel request (runner/worker.py says why each matters).

EVALSHA, so the runner sends the script's body only when Redis does not know it yet
(after a restart): then EVAL, which also loads it.
"""

from __future__ import annotations

import hashlib
from typing import Final, Literal

import redis

from runner import protocol
from runner.redis_tx import command

Claim = Literal["run", "cancelled", "duplicate", "no_slot"]

# KEYS: claim. ARGV: our claim value, claim TTL, the run's lease key, lease
# milliseconds, cancel key. The lease and cancel keys travel in ARGV, not KEYS: Redis's
# ACL checks an EVAL's declared keys for read AND write under the user's main rules,
# and the runner's user may only read cancel keys and only renew or delete lease keys
# (docker/redis-users.acl); the commands inside are checked as what they are.
# A retry after a lost reply finds our own claim: still ours. A lease that ran out
# stays dead (PEXPIRE does not create a key): the reaper may have judged the run lost.
_START: Final = """
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', tonumber(ARGV[2])) then
  if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'duplicate' end
end
if redis.call('PEXPIRE', ARGV[3], tonumber(ARGV[4])) == 0 then return 'no_slot' end
if redis.call('EXISTS', ARGV[5]) == 1 then return 'cancelled' end
return 'run'
"""

_START_SHA: Final = hashlib.sha1(_START.encode()).hexdigest()


def claim_run(client: redis.Redis, run_id: str, mine: str, claim_seconds: int, lease: str,
              lease_seconds: float = protocol.RUNNING_LEASE_SECONDS) -> Claim:
    """`lease`: the run's lease token (from the sealed task); an empty one has no slot."""
    if not lease:
        return "no_slot"
    keys_and_args = (1, protocol.claim_key(run_id), mine, claim_seconds,
                     protocol.lease_key(lease), max(1, int(lease_seconds * 1000)),
                     protocol.cancel_key(run_id))
    # On the calling thread's own connection (runner.redis_tx: one claim per task);
    # the script's body only when Redis does not know it yet.
    try:
        answer = command(client, "EVALSHA", _START_SHA, *keys_and_args)
    except redis.exceptions.NoScriptError:
        answer = command(client, "EVAL", _START, *keys_and_args)
    result = answer.decode() if isinstance(answer, bytes) else str(answer)
    if result not in ("run", "cancelled", "duplicate", "no_slot"):
        raise redis.ResponseError(f"unexpected claim answer {result!r}")
    return result  # type: ignore[return-value]
