"""Admission of a run start: a slot of the runner's capacity, within its project's share.

The runner's slots (runner.protocol) are shared by every tenant. A project may hold at
most project_max_runs() of them at once — KIONGA_PROJECT_MAX_RUNS, or half the runner's
capacity (rounded up) when that is 0 — so one project's runs waiting on approvals cannot
take every slot and turn everyone else away.

A project's runs are a Redis set beside the slots; a member counts while its slot lives
(the runner renews it and frees it at the end), and members whose slot is gone are
dropped on the project's next start. Counting and taking happen in one script (the
protocol's acquire_slot with the project's Share), so two concurrent starts never both
take the last place.
"""

from __future__ import annotations

from typing import Final

import kombu.exceptions
import redis
from django.conf import settings

from kionga.errors import APIError
from kionga.redis_client import sync_redis
from runner import protocol
from runs.dispatch import runner_max_runs

# Idle project sets go away on their own; a live one is touched by every start.
PROJECT_SET_TTL_SECONDS: Final = 86_400
# What a start may meet when Redis (the broker too) is restarting or unreachable.
REDIS_ERRORS: Final = (redis.RedisError, kombu.exceptions.OperationalError)


def project_runs_key(project_id: int) -> str:
    return f"kionga:project:{project_id}:runs"


def project_max_runs(runner_max: int) -> int:
    configured = int(settings.KIONGA_PROJECT_MAX_RUNS)
    return configured if configured > 0 else max(1, (runner_max + 1) // 2)


def take_slot(run_id: str, project_id: int) -> None:
    """Take a slot for run_id in project_id's share, or refuse the start with 429."""
    runner_max = runner_max_runs()
    project_max = project_max_runs(runner_max)
    share = protocol.Share(project_runs_key(project_id), project_max, PROJECT_SET_TTL_SECONDS)
    taken = protocol.acquire_slot(sync_redis(), run_id, runner_max, share=share)
    if taken == protocol.SHARE_FULL:
        raise APIError(
            429, "project_run_quota",
            f"This project already has {project_max} runs in flight, its share of the "
            "runner; wait for one to finish (or raise KIONGA_PROJECT_MAX_RUNS).",
            {"max_runs_per_project": project_max},
        )
    if taken == protocol.RUNNER_FULL:
        raise APIError(
            429, "runner_at_capacity",
            "The runner is at capacity; wait for running graphs to finish or raise "
            "KIONGA_DESIGNER_MAX_RUNS.",
            {"max_runs": runner_max},
        )


def redis_unavailable() -> APIError:
    error = APIError(503, "service_unavailable",
                     "Runs cannot start right now: Redis is unreachable. Try again shortly.")
    # Rendered as Retry-After by kionga.errors.
    error.wait = 1  # type: ignore[attr-defined]
    return error
