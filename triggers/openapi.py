"""OpenAPI shapes of the triggers routes."""

from __future__ import annotations

from typing import Any

from kionga.openapi import obj

_STR = {"type": "string"}
_UUID = {"type": "string", "format": "uuid"}
_TIME = {"type": "string", "format": "date-time"}
FIRING: dict[str, Any] = obj({"trigger_id": _UUID, "delivery_id": _STR, "turn_id": _UUID})
TRIGGER_PROPERTIES: dict[str, Any] = {
    "id": _UUID, "agent_id": _UUID, "kind": {"type": "string", "enum": ["webhook", "schedule"]},
    "name": _STR, "enabled": {"type": "boolean"}, "created_by": {"type": ["string", "null"]},
    "created_at": _TIME, "updated_at": _TIME,
}
_OPTIONAL = {"path": {**_STR, "description": "Webhooks: where deliveries are posted."},
             "cron": _STR, "timezone": _STR, "input": _STR}
TRIGGER: dict[str, Any] = obj(TRIGGER_PROPERTIES, _OPTIONAL)
TRIGGER_WITH_FIRINGS: dict[str, Any] = obj(
    {**TRIGGER_PROPERTIES, "firings": {"type": "array", "items": obj({
        "trigger_id": _UUID, "delivery_id": _STR, "turn_id": _UUID, "status": _STR,
        "created_at": _TIME})}}, _OPTIONAL)
NEW_TRIGGER: dict[str, Any] = obj(TRIGGER_PROPERTIES, {**_OPTIONAL, "secret": {
    **_STR, "description": "Webhooks: the signing secret (whsec_...), shown this once."}})
TRIGGERS: dict[str, Any] = obj({"triggers": {"type": "array", "items": TRIGGER}})
