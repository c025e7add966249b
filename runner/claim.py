"""The start of a run task in one Redis round trip: claim it, renew its slot lease,
look for a cancel request (runner/worker.py says why each matters).

A registered script (EVALSHA, loaded once per connection pool by redis-py), so the
runner sends the script's body only when Redis does not know it yet (after a restart).
"""

from __future__ import annotations

from typing import Any, Final, Literal

import redis

from runner import protocol

Claim = Literal["run", "cancelled", "duplicate", "no_slot"]

# KEYS: claim, slots. ARGV: our claim value, claim TTL, run ID, lease seconds, cancel key.
# The cancel key travels in ARGV, not KEYS: Redis's ACL checks an EVAL's declared keys
# for read AND write, and the runner's user may only read cancel keys
# (docker/redis-users.acl); the EXISTS inside is checked as the read it is.
# A retry after a lost reply finds our own claim: still ours. A slot lease that ran
# out stays dead (as protocol._RENEW): the reaper may have judged the run lost.
_START: Final = protocol._NOW + """
if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', tonumber(ARGV[2])) then
  if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 'duplicate' end
end
local score = redis.call('ZSCORE', KEYS[2], ARGV[3])
if not (score and tonumber(score) > now) then return 'no_slot' end
redis.call('ZADD', KEYS[2], 'XX', now + tonumber(ARGV[4]), ARGV[3])
if redis.call('EXISTS', ARGV[5]) == 1 then return 'cancelled' end
return 'run'
"""

_scripts: dict[int, Any] = {}


def claim_run(client: redis.Redis, run_id: str, mine: str, claim_seconds: int,
              lease_seconds: float = protocol.RUNNING_LEASE_SECONDS) -> Claim:
    script = _scripts.get(id(client))
    if script is None:
        script = _scripts[id(client)] = client.register_script(_START)
    answer = script(keys=[protocol.claim_key(run_id), protocol.SLOTS_KEY],
                    args=[mine, claim_seconds, run_id, lease_seconds,
                          protocol.cancel_key(run_id)])
    result = answer.decode() if isinstance(answer, bytes) else str(answer)
    if result not in ("run", "cancelled", "duplicate", "no_slot"):
        raise redis.ResponseError(f"unexpected claim answer {result!r}")
    return result  # type: ignore[return-value]
