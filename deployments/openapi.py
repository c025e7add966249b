"""OpenAPI shapes of the deployments routes."""

from __future__ import annotations

from typing import Any

from kionga.openapi import obj

_STR = {"type": "string"}
_QUANTITIES = obj({"cpu": _STR, "memory": _STR})
SETTINGS: dict[str, Any] = obj({
    "autoscaling": obj({"min_replicas": {"type": "integer"}, "max_replicas": {"type": "integer"},
                        "target_cpu_percent": {"type": "integer"}}),
    "resources": obj({"requests": _QUANTITIES, "limits": _QUANTITIES}),
    "require_evaluation": {"type": "boolean"},
})
ROLLOUT: dict[str, Any] = obj({
    "version_id": {"type": "string", "format": "uuid"}, "version": {"type": "integer"},
    "content_sha256": _STR,
    "action": {"type": "string", "enum": ["deploy", "rollback", "canary", "promote"]},
    "canary_percent": {"type": ["integer", "null"]}, "settings": SETTINGS,
    "deployed_by": {"type": ["string", "null"]},
    "deployed_at": {"type": "string", "format": "date-time"},
})
AGENT_PROPERTIES: dict[str, Any] = {
    "id": {"type": "string", "format": "uuid"}, "name": _STR,
    "project_id": {"type": "integer"}, "design_id": {"type": "string", "format": "uuid"},
    "version_id": {"type": "string", "format": "uuid"}, "version": {"type": "integer"},
    "settings": SETTINGS,
    "canary": {"oneOf": [{"type": "null"}, obj({
        "version_id": {"type": "string", "format": "uuid"}, "version": {"type": "integer"},
        "content_sha256": _STR, "percent": {"type": "integer"}})],
        "description": "The version serving `percent` of the turns, or null."},
    "created_at": {"type": "string", "format": "date-time"},
    "updated_at": {"type": "string", "format": "date-time"},
}
AGENT: dict[str, Any] = obj(AGENT_PROPERTIES)
AGENT_WITH_ROLLOUTS: dict[str, Any] = obj(
    {**AGENT_PROPERTIES, "rollouts": {"type": "array", "items": ROLLOUT}})
AGENT_LIST: dict[str, Any] = obj({"agents": {"type": "array", "items": AGENT}})
DEPLOYMENT: dict[str, Any] = obj({
    "agent_id": {"type": "string", "format": "uuid"}, "agent_name": _STR,
    "current": {"type": "boolean"}, "deployed_at": {"type": "string", "format": "date-time"},
})
API_KEY_PROPERTIES: dict[str, Any] = {
    "id": {"type": "string", "format": "uuid"}, "agent_id": {"type": "string", "format": "uuid"},
    "name": _STR, "prefix": _STR, "rate_per_minute": {"type": "integer"},
    "expires_at": {"type": ["string", "null"], "format": "date-time"},
    "created_by": {"type": ["string", "null"]},
    "created_at": {"type": "string", "format": "date-time"},
    "revoked_at": {"type": ["string", "null"], "format": "date-time"},
    "last_used_at": {"type": ["string", "null"], "format": "date-time"},
}
API_KEY: dict[str, Any] = obj(API_KEY_PROPERTIES)
NEW_API_KEY: dict[str, Any] = obj({**API_KEY_PROPERTIES, "key": {
    "type": "string", "description": "The key (kak_...): shown this once, never again."}})
API_KEYS: dict[str, Any] = obj({"api_keys": {"type": "array", "items": API_KEY}})
