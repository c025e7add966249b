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
    "from_run": {"type": ["string", "null"], "format": "uuid"},
    "from_node": {"type": ["string", "null"]},
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

_VALUE: dict[str, Any] = {
    "type": "object",
    "required": ["type", "value", "truncated", "redacted"],
    "properties": {"type": {"type": "string"}, "value": {},
                   "truncated": {"type": "boolean"}, "redacted": {"type": "boolean"}},
}
_RECORD_PROPERTIES: dict[str, Any] = {
    "node_id": {"type": "string"},
    "attempt": {"type": "integer"},
    "kind": {"type": "string"},
    "status": {"enum": ["completed", "failed", "reused"]},
    "error": {"type": ["object", "null"]},
    "started_at": {"type": "string", "format": "date-time"},
    "ended_at": {"type": "string", "format": "date-time"},
    "duration_ms": {"type": "integer"},
    "usage": {"type": "object", "properties": {"tokens": {"type": "integer"},
                                                "cost": {"type": "number"}}},
    "reused_from": {"type": ["string", "null"]},
}
NODE_LIST: dict[str, Any] = {
    "type": "object",
    "required": ["run_id", "nodes"],
    "properties": {"run_id": {"type": "string"}, "nodes": {"type": "array", "items": {
        "type": "object", "required": list(_RECORD_PROPERTIES),
        "properties": {**_RECORD_PROPERTIES, "port": {"type": ["string", "null"]},
                       "preview": {"type": ["string", "null"]}}}}},
}
NODE_ATTEMPTS: dict[str, Any] = {
    "type": "object",
    "required": ["run_id", "node_id", "attempts"],
    "properties": {"run_id": {"type": "string"}, "node_id": {"type": "string"},
                   "attempts": {"type": "array", "items": {
                       "type": "object", "required": [*_RECORD_PROPERTIES, "inputs", "output"],
                       "properties": {
                           **_RECORD_PROPERTIES,
                           "inputs": {"type": "array", "items": {
                               **_VALUE, "properties": {**_VALUE["properties"],
                                                        "source": {"type": "string"}}}},
                           "output": {"oneOf": [{"type": "null"}, {
                               **_VALUE, "properties": {**_VALUE["properties"],
                                                        "port": {"type": "string"}}}]}}}}},
}
