"""Admission of a run start: a slot of the runner's capacity, within its project's share.

The runner's slots (runner.protocol) are shared by every tenant. A project may hold at
most project_max_runs() of them at once — KIONGA_PROJECT_MAX_RUNS, or half the runner's
capacity (rounded up) when that is 0 — so one project's runs waiting on approvals cannot
take every slot and turn everyone else away.

A project's runs are a Redis set beside the slots; a member counts while its slot lives
(the runner renews its lease and frees it at the end), and members whose slot is gone
are dropped on the project's next start. Counting and taking happen in one script (the
protocol's ACQUIRE_LUA with the project's share and the runner's announced capacity,
which counts only within [1, KIONGA_DESIGNER_MAX_RUNS], and the slot's lease under the
token issued here), so two concurrent starts never both take the last place. A caller
whose API throttles are not counted yet (a run start, runs.admission) has them
counted in the same script, first: one round trip for the whole admission, and a
throttled start takes no slot, not even for a moment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import kombu.exceptions
import redis
from django.conf import settings

from kionga import throttles
from kionga.errors import APIError
from kionga.redis_client import sync_redis
from runner import protocol

# Idle project sets go away on their own; a live one is touched by every start.
PROJECT_SET_TTL_SECONDS: Final = 86_400
# What a start may meet when Redis (the broker too) is restarting or unreachable.
REDIS_ERRORS: Final = (redis.RedisError, kombu.exceptions.OperationalError)


def project_runs_key(project_id: int) -> str:
    return f"kionga:project:{project_id}:runs"


def project_parked_key(project_id: int) -> str:
    return f"kionga:project:{project_id}:parked"


def parking(project_id: int) -> protocol.Parking:
    """How many runs the project, and the runner, may park (the settings; 0 = defaults)."""
    overall = int(settings.KIONGA_MAX_PARKED_RUNS) or int(settings.KIONGA_DESIGNER_MAX_RUNS)
    project = int(settings.KIONGA_PROJECT_MAX_PARKED_RUNS) or max(1, (overall + 1) // 2)
    return protocol.Parking(project_parked_key(project_id), project, overall)


def _share(project_id: int) -> protocol.Share:
    return protocol.Share(project_runs_key(project_id), 0, PROJECT_SET_TTL_SECONDS)


def park_run(run_id: str, project_id: int) -> bool:
    """A run is about to wait on a person: its slot leaves the runner's count and its
    project's share (its lease stays, renewed by the runner: the reaper still sees a
    dead runner). True if parked; False if it holds no slot (a deployed agent's turn)
    or Redis cannot say (it then keeps its slot). 429 `parked_run_quota` when the
    project, or the runner, already parks its most."""
    park = parking(project_id)
    try:
        code = protocol.park_slot(sync_redis(), run_id, _share(project_id), park)
    except REDIS_ERRORS:
        return False
    if code in (protocol.PARK_PROJECT_FULL, protocol.PARK_FULL):
        whole = code == protocol.PARK_FULL
        most = park.runner_max_runs if whole else park.max_runs
        raise APIError(
            429, "parked_run_quota",
            f"{'The runner' if whole else 'This project'} already has {most} runs waiting "
            "on approvals; decide some first (or raise "
            f"{'KIONGA_MAX_PARKED_RUNS' if whole else 'KIONGA_PROJECT_MAX_PARKED_RUNS'}).",
            {"max_parked_runs": most},
        )
    return code == protocol.PARKED


def unpark_run(run_id: str, project_id: int) -> None:
    """The run's wait on a person is over: it holds its slot again (best effort: a run
    left parked is forgotten once its lease is gone)."""
    try:
        protocol.unpark_slot(sync_redis(), run_id, _share(project_id), parking(project_id))
    except REDIS_ERRORS:
        pass


def project_max_runs(runner_max: int) -> int:
    """A project's share of `runner_max` slots (ACQUIRE_LUA computes the same)."""
    configured = int(settings.KIONGA_PROJECT_MAX_RUNS)
    return configured if configured > 0 else max(1, (runner_max + 1) // 2)


@dataclass
class ThrottleCount:
    """The API throttles of one request still to count (DRF counts them before the
    view: a caller that checks first counts them with the slot, or alone before it
    answers an error); `done` once they were."""

    windows: Sequence[tuple[throttles.WindowThrottle, throttles.Window]] = ()
    done: bool = False


THROTTLED: Final = 2  # what _ADMIT answers when a throttle refused

# KEYS: the slots, their leases, the project's runs, the runner's info, then one window
# per throttle. ARGV: run, its lease token, default max_runs, lease, the project's max
# (0: half the runner), the project set's TTL, then a window's four arguments per
# throttle. Returns {SLOT_TAKEN | RUNNER_FULL | SHARE_FULL | THROTTLED, the runner's
# max, the project's max, then each window's verdict}.
_FIRST_WINDOW: Final = 5
_ADMIT: Final = throttles.WINDOW_LUA + protocol.ACQUIRE_LUA + """
local verdicts, refused = {}, false
for i = """ + str(_FIRST_WINDOW) + """, #KEYS do
  local at = 7 + (i - """ + str(_FIRST_WINDOW) + """) * 4
  local verdict = throttle_window(KEYS[i], tonumber(ARGV[at]), tonumber(ARGV[at + 1]),
                                  tonumber(ARGV[at + 2]), ARGV[at + 3])
  refused = refused or verdict[1] == 0
  verdicts[#verdicts + 1] = verdict
end
local answer = {""" + str(THROTTLED) + """, 0, 0}
if not refused then
  answer = acquire_slot(KEYS[1], KEYS[2], KEYS[3], KEYS[4], ARGV[1], ARGV[2],
                        tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5]),
                        tonumber(ARGV[6]))
end
for _, verdict in ipairs(verdicts) do answer[#answer + 1] = verdict end
return answer
"""


def take_slot(run_id: str, project_id: int, counting: ThrottleCount | None = None) -> str:
    """Take a slot for run_id in project_id's share and return its lease token (for the
    runner, sealed in the task), or refuse the start with 429 (`counting`: count these
    throttles first, 429 throttled if one refuses)."""
    windows = counting.windows if counting is not None else ()
    token = protocol.new_lease_token()
    keys = [protocol.SLOTS_KEY, protocol.LEASES_KEY, project_runs_key(project_id),
            protocol.RUNNER_INFO_KEY, *(window.key for _throttle, window in windows)]
    args: list[Any] = [run_id, token, int(settings.KIONGA_DESIGNER_MAX_RUNS),
                       protocol.QUEUED_LEASE_SECONDS, int(settings.KIONGA_PROJECT_MAX_RUNS),
                       PROJECT_SET_TTL_SECONDS,
                       *(arg for _throttle, window in windows for arg in window.args)]
    code, runner_max, project_max, *verdicts = sync_redis().eval(_ADMIT, len(keys), *keys,
                                                                 *args)
    if counting is not None:
        counting.done = True
    if code == THROTTLED:
        raise throttles.refusal([throttle.wait() for (throttle, window), verdict
                                 in zip(windows, verdicts, strict=True)
                                 if not throttle.judge(window, verdict)])
    if code == protocol.SHARE_FULL:
        raise APIError(
            429, "project_run_quota",
            f"This project already has {project_max} runs in flight, its share of the "
            "runner; wait for one to finish (or raise KIONGA_PROJECT_MAX_RUNS).",
            {"max_runs_per_project": project_max},
        )
    if code == protocol.RUNNER_FULL:
        raise APIError(
            429, "runner_at_capacity",
            "The runner is at capacity; wait for running graphs to finish or raise "
            "KIONGA_DESIGNER_MAX_RUNS.",
            {"max_runs": runner_max},
        )
    return token


def redis_unavailable(what: str = "Runs cannot start right now") -> APIError:
    """503 for Redis unreachable or refusing writes (full: it never evicts)."""
    return APIError(503, "service_unavailable",
                    f"{what}: Redis is unavailable. Try again shortly.", retry_after=1)
