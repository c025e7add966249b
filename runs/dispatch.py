"""Hand a run to the runner: a capacity slot first, then a signed Celery task.

Nothing secret from the platform goes into the payload: graphs hold resource IDs,
and the run credential, the run's event key (runs/event_keys.py) and its slot's lease
token (runs/quota.py) are the only keys the runner gets, sealed for it
(runner/task_seal.py) so no other reader of the broker learns them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from celery import Celery
from django.conf import settings

from contracts.hashing import canonical_json
from kionga.errors import APIError
from kionga.redis_client import sync_redis
from runner import protocol, task_signature
from runner.request import ScriptedApprovals
from runner.task_limits import hard_time_limit
from runner.task_seal import seal
from runner.tracing import current_traceparent
from runs import task_message
from runs.event_keys import event_key
from runs.models import Run


def check_runner_configured() -> None:
    if not settings.KIONGA_AGENT_DESIGNER_RUNNER_URL:
        raise APIError(
            503,
            "runner_not_configured",
            "Runs are disabled: set KIONGA_AGENT_DESIGNER_RUNNER_URL on the gateway and start "
            "the runner.",
        )


def runner_max_runs() -> int:
    """The runner's own cap when it has announced one within [1, the configured cap],
    else the configured cap (the admission's rule, runner.protocol.runner_cap)."""
    return protocol.runner_cap(sync_redis(), int(settings.KIONGA_DESIGNER_MAX_RUNS))


def release_capacity(*run_ids: str) -> None:
    protocol.release_slot(sync_redis(), *run_ids)


def build_payload(run: Run, graph: dict[str, Any], history: list[dict[str, Any]],
                  credential: str, lease: str, subflows: list[dict[str, Any]] | None = None,
                  *, platform_llm: dict[str, str] | None = None,
                  scripted_approvals: ScriptedApprovals | None = None,
                  reuse: dict[str, Any] | None = None) -> dict[str, Any]:
    """The task; `lease`: the token of the run's slot lease (runs.quota.take_slot);
    `subflows` are the artifacts of the versions the graph reaches
    (designs.versions.reached_versions): the runner checks each graph against its
    content_sha256 before any node runs. `platform_llm` ({backend, model}, a judge
    run's) replaces the runner's own for `llm` nodes; never its server or key.
    `scripted_approvals`: an evaluation's run. `reuse`: a re-run's recorded outcomes
    by node ID (runs/replay.py)."""
    run_id = str(run.pk)
    secrets = {"credential": credential, "event_key": event_key(run_id).hex(), "lease": lease}
    return {
        "run_id": run_id,
        "project_id": run.project_id,
        "graph": graph,
        "input": run.input,
        "session_id": run.session_id or None,
        "history": history,
        "allow_side_effects": run.allow_side_effects,
        "stop_after": run.stop_after or None,
        "subflows": {entry["version_id"]: entry["graph"] for entry in subflows or []},
        "subflow_hashes": {entry["version_id"]: entry["content_sha256"]
                           for entry in subflows or []},
        "secret_patterns": list(settings.KIONGA_SECRET_PATTERNS),
        "llm": platform_llm,
        "sealed": seal(secrets, settings.KIONGA_AGENT_DESIGNER_RUNNER_TOKEN, run_id),
        "scripted_approvals": scripted_approvals.to_json() if scripted_approvals else None,
        "callback_url": settings.KIONGA_AGENT_DESIGNER_CALLBACK_URL,
        "issued_at": datetime.now(UTC).isoformat(),
        **({"reuse": reuse} if reuse else {}),
        **({"traceparent": traceparent} if (traceparent := current_traceparent()) else {}),
    }


def send_run(celery_app: Celery, payload: dict[str, Any]) -> None:
    # The payload travels as its canonical JSON, signed as sent (runner.task_signature.opened).
    text = canonical_json(payload)
    signature = task_signature.sign_text(text, settings.KIONGA_AGENT_DESIGNER_RUNNER_TOKEN)
    # Long enough for every wait on a person the graph may make (the run's own clock
    # stands still meanwhile), so a run waiting on an approval is never killed as wedged.
    time_limit = hard_time_limit(payload["graph"], payload["subflows"])
    if celery_app.conf.broker_url == settings.REDIS_URL:
        # The usual deployment: one Redis call (runs/task_message.py).
        task_message.publish(sync_redis(), payload["run_id"], text, signature, time_limit)
        return
    # A short argsrepr: Celery would otherwise build a repr of the whole graph for
    # every message header (and show the credential to anyone reading the broker).
    celery_app.send_task(protocol.TASK_NAME, args=[text, signature], queue=protocol.QUEUE,
                         argsrepr=f"(run {payload['run_id']})", kwargsrepr="{}",
                         time_limit=time_limit)
