"""OpenAPI shapes of the members, invitations, tokens and resources routes."""

from __future__ import annotations

from typing import Any

from kionga.openapi import INTEGER, STRING, obj

NULLABLE_TIME: dict[str, Any] = {"type": ["string", "null"], "format": "date-time"}
TIME: dict[str, Any] = {"type": "string", "format": "date-time"}
ROLE: dict[str, Any] = {"type": "string", "enum": ["viewer", "editor", "admin"]}
BOOLEAN: dict[str, Any] = {"type": "boolean"}
STRINGS: dict[str, Any] = {"type": "array", "items": STRING}


def array_of(key: str, item: dict[str, Any]) -> dict[str, Any]:
    return obj({key: {"type": "array", "items": item}})


MEMBER = obj({"user_id": INTEGER, "username": STRING, "role": ROLE})
MEMBERS = array_of("members", MEMBER)

NULLABLE_STRING: dict[str, Any] = {"type": ["string", "null"]}
INVITATION_STATUS: dict[str, Any] = {
    "type": "string", "enum": ["pending", "accepted", "declined", "revoked", "expired"]}
# As the project's admins see one: what they typed, never whom it reached.
INVITATION = obj({"id": STRING, "user": STRING, "role": ROLE, "status": INVITATION_STATUS,
                  "invited_by": NULLABLE_STRING, "created_at": TIME, "expires_at": TIME})
INVITATIONS = array_of("invitations", INVITATION)
PROJECT_BRIEF = obj({"id": INTEGER, "slug": STRING, "name": STRING})
# As the invited person sees one.
MY_INVITATION = obj({"id": STRING, "project": PROJECT_BRIEF, "role": ROLE,
                     "invited_by": NULLABLE_STRING, "created_at": TIME, "expires_at": TIME})
MY_INVITATIONS = array_of("invitations", MY_INVITATION)
# The project joined (kionga.models.Membership.to_dict).
JOINED = obj({"project": obj({"id": INTEGER, "slug": STRING, "name": STRING,
                              "created_at": TIME}), "role": ROLE})

TOKEN_PROPERTIES: dict[str, Any] = {
    "id": INTEGER, "name": STRING, "prefix": STRING, "created_at": TIME,
    "last_used_at": NULLABLE_TIME, "expires_at": NULLABLE_TIME, "revoked": BOOLEAN,
    "parent_id": {"type": ["integer", "null"],
                  "description": "The token whose request made this one; null: made by a "
                                 "signed-in person."},
}
TOKEN = obj(TOKEN_PROPERTIES)
NEW_TOKEN = obj({**TOKEN_PROPERTIES, "token": {
    "type": "string", "description": "The token: shown this once, never again."}})
TOKENS = array_of("tokens", TOKEN)
PROJECT_TOKENS = array_of("tokens", obj({**TOKEN_PROPERTIES, "owner": STRING,
                                         "revoked_in_project": BOOLEAN}))

_COMMON: dict[str, Any] = {
    "id": STRING, "kind": {"type": "string", "enum": ["model", "function", "connection",
                                                       "knowledge_base", "dataset",
                                                       "mcp_server"]},
    "name": STRING, "description": STRING,
    "created_at": NULLABLE_TIME,
}
SCHEMA: dict[str, Any] = {"type": "object", "description": "The tool's JSON Schema."}
# One tool of an MCP server; `function` is the name a tool node uses.
MCP_TOOL = obj({"name": STRING, "function": STRING, "description": STRING,
                "input_schema": SCHEMA})
MCP_TOOLS = obj({"tools": {"type": "array", "items": MCP_TOOL},
                 "tools_listed_at": NULLABLE_TIME})
_KIND_FIELDS: dict[str, dict[str, Any]] = {
    "model": {"base_url": STRING, "model_name": STRING, "secret_set": BOOLEAN,
              "prices": obj({"prompt_per_1k": {"type": "number"},
                             "completion_per_1k": {"type": "number"}})},
    "function": {"url": {"type": ["string", "null"]}, "secret_set": BOOLEAN,
                 "builtin": BOOLEAN},
    "mcp_server": {"url": STRING, "secret_header_names": STRINGS,
                   "tools": {"type": "array", "items": MCP_TOOL},
                   "tools_listed_at": NULLABLE_TIME},
    "connection": {"base_url": STRING, "allowed_methods": STRINGS, "allowed_paths": STRINGS,
                   "secret_header_names": STRINGS},
    "knowledge_base": {"document_count": INTEGER},
    "dataset": {"object_count": INTEGER},
}
RESOURCE_OF: dict[str, dict[str, Any]] = {
    kind: obj({**_COMMON, **fields}) for kind, fields in _KIND_FIELDS.items()
}
# An MCP server's tool listed as a function (kind=function): its server and schema.
RESOURCE_OF["function"]["properties"].update({"mcp_server": STRING, "input_schema": SCHEMA})
RESOURCE: dict[str, Any] = {"anyOf": list(RESOURCE_OF.values())}
RESOURCES = array_of("resources", RESOURCE)

DOCUMENT = obj({"id": INTEGER, "title": STRING, "text": STRING, "characters": INTEGER})
DOCUMENTS = array_of("documents", DOCUMENT)
OBJECT_KEYS = obj({"keys": STRINGS})
OBJECT = obj({"key": STRING, "value": {}})
