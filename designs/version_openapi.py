"""OpenAPI shapes of the version routes (documentation and the test client's checks)."""

from __future__ import annotations

from typing import Any

from contracts.schemas import load_schema

_SHA = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
VERSION_SUMMARY_PROPERTIES: dict[str, Any] = {
    "id": {"type": "string", "format": "uuid"},
    "design_id": {"type": "string", "format": "uuid"},
    "project_id": {"type": "integer"},
    "number": {"type": "integer", "minimum": 1},
    "content_sha256": _SHA,
    "source_revision": {"type": "integer", "minimum": 1},
    "notes": {"type": "string"},
    "author": {"type": ["string", "null"]},
    "created_at": {"type": "string", "format": "date-time"},
}
VERSION_SUMMARY: dict[str, Any] = {"type": "object",
                                   "required": list(VERSION_SUMMARY_PROPERTIES),
                                   "properties": VERSION_SUMMARY_PROPERTIES}
# A publish's answers: 201 with the new version, 200 with the existing version of the
# same behaviour and a message saying that nothing new was published.
PUBLISHED: dict[str, Any] = {
    "type": "object",
    "required": [*VERSION_SUMMARY_PROPERTIES, "created"],
    "properties": {**VERSION_SUMMARY_PROPERTIES, "created": {"type": "boolean"}},
}
PUBLISHED_BEFORE: dict[str, Any] = {
    "type": "object",
    "required": [*VERSION_SUMMARY_PROPERTIES, "created", "message"],
    "properties": {**VERSION_SUMMARY_PROPERTIES, "created": {"type": "boolean"},
                   "message": {"type": "string"}},
}
DESIGN_VERSION: dict[str, Any] = {
    "type": "object",
    "required": [*VERSION_SUMMARY_PROPERTIES, "deployments"],
    "properties": {**VERSION_SUMMARY_PROPERTIES,
                   "deployments": {"type": "array", "items": {"type": "object"}}},
}
DESIGN_VERSIONS: dict[str, Any] = {
    "type": "object", "required": ["versions"],
    "properties": {"versions": {"type": "array", "items": DESIGN_VERSION}},
}
VERSION_LIST: dict[str, Any] = {
    "type": "object", "required": ["versions"],
    "properties": {"versions": {"type": "array", "items": VERSION_SUMMARY}},
}


def _artifact() -> dict[str, Any]:
    """artifact.v1 as the answer's schema: the graph described loosely (its own schema
    is contracts/schemas/graph.v2; the artifact is validated against it when written)."""
    schema = load_schema("artifact.v1")
    for key in ("$schema", "$id", "$defs"):
        schema.pop(key, None)
    schema["properties"]["graph"] = {"type": "object"}
    schema["properties"]["content_sha256"] = _SHA
    schema["properties"]["evaluation"] = {"type": ["object", "null"]}
    schema["properties"]["subflows"]["items"] = {
        "type": "object", "required": ["version_id", "content_sha256", "graph"],
        "properties": {"version_id": {"type": "string"}, "content_sha256": _SHA,
                       "graph": {"type": "object"}}}
    return schema


ARTIFACT: dict[str, Any] = _artifact()
