"""OpenAPI shapes of the runs API."""

from __future__ import annotations

from typing import Any, get_args

from runner.protocol import RunStatus

RUN_PROPERTIES: dict[str, Any] = {
    "id": {"type": "string", "format": "uuid"},
    "design_id": {"type": ["string", "null"]},
    "version_id": {"type": ["string", "null"]},
    "revision": {"type": ["integer", "null"]},
    "content_sha256": {"type": "string"},
    "status": {"enum": list(get_args(RunStatus))},
    "input": {"type": "string"},
    "output": {"type": ["string", "null"]},
    "error": {"type": ["object", "null"]},
    "usage": {"type": "object", "properties": {"tokens": {"type": "integer"},
                                                "cost": {"type": "number"}}},
    "allow_side_effects": {"type": "boolean"},
    "created_at": {"type": "string", "format": "date-time"},
    "started_at": {"type": ["string", "null"], "format": "date-time"},
    "finished_at": {"type": ["string", "null"], "format": "date-time"},
}
EVENT: dict[str, Any] = {
    "type": "object",
    "required": ["seq", "type", "at"],
    "properties": {"seq": {"type": "integer"}, "type": {"type": "string"},
                   "at": {"type": "string"}},
}
RUN: dict[str, Any] = {"type": "object", "required": list(RUN_PROPERTIES),
                       "properties": RUN_PROPERTIES}
RUN_WITH_EVENTS: dict[str, Any] = {
    "type": "object",
    "required": [*RUN_PROPERTIES, "events"],
    "properties": {**RUN_PROPERTIES, "events": {"type": "array", "items": EVENT}},
}
RUN_LIST: dict[str, Any] = {"type": "object", "required": ["runs"],
                            "properties": {"runs": {"type": "array", "items": RUN}}}
EVENTS_PAGE: dict[str, Any] = {
    "type": "object",
    "required": ["events", "next_after", "complete"],
    "properties": {"events": {"type": "array", "items": EVENT},
                   "next_after": {"type": "integer"}, "complete": {"type": "boolean"}},
}
