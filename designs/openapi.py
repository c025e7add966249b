"""OpenAPI shapes of the designs API (documentation, the test client's checks, fuzzing).

The graph body is described loosely on purpose: a draft may be wrong in any way
(wrong types are issues in a 200 report), so the schema only says what a client
should send, not what the server accepts.
"""

from __future__ import annotations

from typing import Any, get_args

from contracts.registry import ResourceKind, SettingType
from contracts.types import ALL_TYPES
from kionga.openapi import INTEGER, STRING, obj

_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}

NODE: dict[str, Any] = {
    "type": "object",
    "required": ["id", "kind"],
    "properties": {
        "id": {"type": "string"},
        "kind": {"type": "string"},
        "name": {"type": "string"},
        "x": {"type": "number"},
        "y": {"type": "number"},
        "group": {"type": "string"},
        "config": _STRING_MAP,
    },
}
EDGE: dict[str, Any] = {
    "type": "object",
    "required": ["from", "to"],
    "properties": {k: {"type": "string"} for k in ("from", "to", "from_port", "to_port")},
}
GRAPH_PROPERTIES: dict[str, Any] = {
    "schema_version": {"type": "integer"},
    "name": {"type": "string"},
    "nodes": {"type": "array", "items": NODE},
    "edges": {"type": "array", "items": EDGE},
    "settings": {
        "type": "object",
        "properties": {k: {"type": "integer"} for k in ("max_steps", "timeout_seconds",
                                                        "max_tokens")},
    },
}
GRAPH: dict[str, Any] = {"type": "object", "required": ["nodes", "edges"],
                         "properties": GRAPH_PROPERTIES}
UNSAVED_GRAPH: dict[str, Any] = {
    "type": "object",
    "required": ["nodes", "edges"],
    "properties": {"project_id": {"type": "integer"}, **GRAPH_PROPERTIES},
}
ISSUE: dict[str, Any] = {
    "type": "object",
    "required": ["severity", "code", "message"],
    "properties": {
        "severity": {"enum": ["error", "warning"]},
        "code": {"type": "string"},
        "message": {"type": "string"},
        "path": {"type": "string"},
        "node_id": {"type": "string"},
    },
}
_VALIDATION = {
    "runnable": {"type": "boolean"},
    "issues": {"type": "array", "items": ISSUE},
    "content_sha256": {"type": ["string", "null"]},
}
REPORT: dict[str, Any] = {
    "type": "object",
    "required": ["runnable", "issues", "content_sha256", "graph"],
    "properties": {**_VALIDATION, "graph": {"type": ["object", "null"]}},
}
DESIGN_SUMMARY_PROPERTIES: dict[str, Any] = {
    "id": {"type": "string", "format": "uuid"},
    "project_id": {"type": "integer"},
    "name": {"type": "string"},
    "description": {"type": "string"},
    "revision": {"type": "integer"},
    "require_evaluation": {"type": "boolean"},
    "require_evaluation_by_staff": {
        "type": "boolean",
        "description": "Staff switched the gate on: only staff can switch it off, and only an "
                       "evaluation judged by the operator's model opens it."},
    "created_at": {"type": "string", "format": "date-time"},
    "updated_at": {"type": "string", "format": "date-time"},
}
DESIGN: dict[str, Any] = {
    "type": "object",
    "required": [*DESIGN_SUMMARY_PROPERTIES, "graph", "validation", "revisions"],
    "properties": {
        **DESIGN_SUMMARY_PROPERTIES,
        "graph": {"type": "object"},
        "validation": {"type": "object", "required": list(_VALIDATION), "properties": _VALIDATION},
        "revisions": {"type": "array", "items": {"type": "object"}},
    },
}
DESIGN_LIST: dict[str, Any] = {
    "type": "object",
    "required": ["designs"],
    "properties": {"designs": {"type": "array", "items": {
        "type": "object", "required": list(DESIGN_SUMMARY_PROPERTIES),
        "properties": DESIGN_SUMMARY_PROPERTIES}}},
}

# GET agent-designs/components: contracts.registry.registry_document(), as it is built.
_BOOLEAN: dict[str, Any] = {"type": "boolean"}
_PORT_TYPE: dict[str, Any] = {"enum": list(ALL_TYPES)}
_PORT = obj({"name": STRING, "types": {"type": "array", "items": _PORT_TYPE}})
_SETTING = obj({
    "name": STRING, "label": STRING, "help": STRING,
    "type": {"enum": list(get_args(SettingType))}, "required": _BOOLEAN,
    "default": {"type": ["string", "null"]}, "minimum": {"type": ["integer", "null"]},
    "maximum": {"type": ["integer", "null"]}, "choices": {"type": "array", "items": STRING},
    "resource": {"enum": [*get_args(ResourceKind), None]},
})
_COMPONENT = obj({
    "kind": STRING, "label": STRING, "help": STRING,
    "inputs": {"type": "array", "items": _PORT}, "outputs": {"type": "array", "items": _PORT},
    "settings": {"type": "array", "items": _SETTING}, "side_effects": _BOOLEAN,
    "timeout_seconds": INTEGER, "retries": INTEGER, "input_optional": _BOOLEAN,
    "error_port": _BOOLEAN, "pure": _BOOLEAN, "streams": _BOOLEAN,
    # (setting, value): the node waits for every inbound edge when that setting has it.
    "all_inputs_when": {"type": ["array", "null"], "items": STRING,
                        "minItems": 2, "maxItems": 2},
})
REGISTRY = obj({
    "registry_version": STRING,
    "types": {"type": "array", "items": _PORT_TYPE},
    "components": {"type": "array", "items": _COMPONENT},
    "conversions": {"type": "array", "items": obj(
        {"from": _PORT_TYPE, "to": _PORT_TYPE, "description": STRING})},
    "condition_operators": {"type": "array", "items": obj(
        {"name": STRING, "argument": STRING, "help": STRING})},
    "limits": {"type": "object", "additionalProperties": INTEGER},
})

# GET agent-designs/templates: designs.starter_templates.TEMPLATES.
TEMPLATE_LIST = obj({"templates": {"type": "array", "items": obj({
    "id": STRING, "name": STRING, "description": STRING, "example_input": STRING,
    "graph": GRAPH,
})}})

_CHANGE: dict[str, Any] = {
    "type": "object", "required": ["field", "before", "after", "cosmetic"],
    "properties": {"field": {"type": "string"}, "before": {}, "after": {},
                   "cosmetic": {"type": "boolean"}},
}
_EDGES: dict[str, Any] = {"type": "array", "items": {"type": "object", "properties": {
    "from": {"type": "string"}, "from_port": {"type": "string"}, "to": {"type": "string"},
    "to_port": {"type": "string"}}}}
_NODES: dict[str, Any] = {"type": "array", "items": {"type": "object", "properties": {
    "id": {"type": "string"}, "kind": {"type": "string"}, "config": {"type": "object"}}}}
DIFF: dict[str, Any] = {
    "type": "object",
    "required": ["design_id", "from", "to", "nodes", "edges", "settings", "from_sha256",
                 "to_sha256", "behaviour_changed"],
    "properties": {
        "design_id": {"type": "string"}, "from": {"type": "string"}, "to": {"type": "string"},
        "nodes": {"type": "object", "properties": {
            "added": _NODES, "removed": _NODES,
            "changed": {"type": "array", "items": {"type": "object", "properties": {
                "id": {"type": "string"}, "changes": {"type": "array", "items": _CHANGE}}}}}},
        "edges": {"type": "object", "properties": {"added": _EDGES, "removed": _EDGES}},
        "settings": {"type": "array", "items": _CHANGE},
        "from_sha256": {"type": "string"}, "to_sha256": {"type": "string"},
        "behaviour_changed": {"type": "boolean",
                              "description": "False for a cosmetic edit (names, positions)."},
    },
}

PIN = obj({"node_id": STRING, "port": STRING, "value": {},
           "author": {"type": ["string", "null"]}, "updated_at": STRING})
PIN_LIST = obj({"pins": {"type": "array", "items": PIN}})
