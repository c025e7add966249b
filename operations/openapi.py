"""OpenAPI shapes of the metrics routes."""

from __future__ import annotations

from typing import Any

from deployments.openapi import AGENT, ROLLOUT
from kionga.openapi import obj

_NUM = {"type": "number"}
_INT = {"type": "integer"}
_TIME = {"type": "string", "format": "date-time"}
_OPT_NUM = {"type": ["number", "null"]}
LATENCY = obj({"p50": _OPT_NUM, "p95": _OPT_NUM, "p99": _OPT_NUM})
BUCKET = obj({"start": _TIME, "requests": _INT, "errors": _INT, "latency_ms": LATENCY,
              "tokens": _INT, "cost": _NUM})
SERIES = {"type": "array", "minItems": 24, "maxItems": 24, "items": BUCKET}
OVERVIEW: dict[str, Any] = obj({
    "project_id": _INT, "hours": _INT, "from": _TIME, "to": _TIME, "runs": _INT,
    "success_rate": _OPT_NUM, "failed": _INT,
    "failures_by_reason": {"type": "object", "additionalProperties": _INT},
    "latency_ms": LATENCY, "tokens": _INT, "cost": _NUM,
    "evaluations": _INT, "pending_approvals": _INT, "agents": _INT,
    "series": SERIES,
})
TURN = obj({"id": {"type": "string", "format": "uuid"}, "status": {"type": "string"},
            "created_at": _TIME, "version_id": {"type": ["string", "null"]},
            "latency_ms": {"type": ["integer", "null"]}, "tokens": _INT, "cost": _NUM,
            "error": {"type": ["string", "null"]}})
VERSION_TOTALS = obj({
    "role": {"type": "string", "enum": ["current", "canary"]},
    "version_id": {"type": "string", "format": "uuid"}, "version": _INT,
    "content_sha256": {"type": "string"},
    "percent": {"type": ["integer", "null"], "description": "The canary's share of turns."},
    "requests": _INT, "errors": _INT, "success_rate": _OPT_NUM, "latency_ms": LATENCY,
    "tokens": _INT, "cost": _NUM})
OPERATIONS: dict[str, Any] = obj({
    "agent": AGENT, "hours": _INT, "from": _TIME, "to": _TIME,
    "totals": obj({"requests": _INT, "errors": _INT, "success_rate": _OPT_NUM,
                   "latency_ms": LATENCY, "tokens": _INT, "cost": _NUM}),
    "series": SERIES,
    "versions": {"type": "array", "items": VERSION_TOTALS, "description":
                 "The current version's totals and, during a canary, the canary's."},
    "recent_turns": {"type": "array", "items": TURN},
    "rollouts": {"type": "array", "items": ROLLOUT},
    "siblings": {"type": "array", "items": obj({
        "id": {"type": "string", "format": "uuid"}, "name": {"type": "string"},
        "design_id": {"type": "string", "format": "uuid"}, "design_name": {"type": "string"},
        "version": _INT, "updated_at": _TIME})},
})
