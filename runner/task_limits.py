"""The hard time limit of one run task: how long a pool process may run it before
Celery kills it as wedged (celery_app: prefork enforces it; the slot's lease then
runs out and the gateway's reaper ends the run with runner_lost).

The engine ends a run by itself when its timeout_seconds (≤ 300) runs out, but that
clock stands still while the run waits for a person (runner.clock). So the hard limit
of a task is the base limit plus the longest the run can wait for people: every
approval node its graph (and the published versions it reaches) holds, each waiting at
most its own timeout_seconds, the grace for the gateway's verdict and one poll in
flight, times how often a map or loop node may run its version. Waits on parallel
branches are counted one after the other: an upper bound is all this needs. The
gateway computes it when it sends the task (runs/dispatch.py) and puts it in the
message's `timelimit` header, which the worker's pool honours per task.
"""

from __future__ import annotations

from typing import Any, Final

from contracts.registry import COMPONENTS
from runner.components.approval import GRACE_SECONDS
from runner.settings import DEFAULT_HTTP_TIMEOUT_SECONDS

# The longest run without waits: timeout_seconds ≤ 300 (reference), plus a margin for
# the start, the last events and the sink's close. Also the worker's default limit.
BASE_TIME_LIMIT: Final = 420
# One approval poll in flight past the grace: KIONGA_RUNNER_HTTP_TIMEOUT's default.
POLL_ALLOWANCE: Final = int(DEFAULT_HTTP_TIMEOUT_SECONDS)
# How often a node may run its published version: the first of these settings it has.
REPEATS: Final = ("max_items", "max_iterations")
# Versions nest at most this deep (runner.engine.MAX_SUBFLOW_DEPTH; the artifact check
# forbids cycles anyway).
MAX_DEPTH: Final = 8


def hard_time_limit(graph: dict[str, Any], subflows: dict[str, dict[str, Any]]) -> int:
    """Seconds a run of `graph` (with its published versions) may take at most."""
    return BASE_TIME_LIMIT + person_waits(graph, subflows)


def person_waits(graph: dict[str, Any], subflows: dict[str, dict[str, Any]],
                 depth: int = 0) -> int:
    """The longest the graph's approvals can keep one run waiting, in seconds."""
    if depth > MAX_DEPTH:
        return 0
    total = 0
    for node in graph.get("nodes") or []:
        kind, config = node.get("kind"), node.get("config") or {}
        if kind == "approval":
            total += approval_wait(config)
        version = config.get("subflow")
        nested = subflows.get(version) if isinstance(version, str) else None
        if nested is not None:
            total += _repeats(kind, config) * person_waits(nested, subflows, depth + 1)
    return total


def approval_wait(config: dict[str, Any]) -> int:
    return _setting("approval", config, "timeout_seconds") + GRACE_SECONDS + POLL_ALLOWANCE


def _repeats(kind: Any, config: dict[str, Any]) -> int:
    component = COMPONENTS.get(kind) if isinstance(kind, str) else None
    for name in REPEATS:
        if component is not None and component.setting(name) is not None:
            return _setting(kind, config, name)
    return 1


def _setting(kind: str, config: dict[str, Any], name: str) -> int:
    """The configured whole number, or the registry's default, within its range."""
    spec = COMPONENTS[kind].setting(name)
    assert spec is not None and spec.default is not None and spec.maximum is not None
    try:
        value = int(str(config.get(name) or spec.default).strip())
    except ValueError:
        value = int(spec.default)  # the node fails at run time; this is only a bound
    return min(max(value, spec.minimum or 0), spec.maximum)
