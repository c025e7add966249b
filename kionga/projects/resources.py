"""A project's resources through the API: one table of kinds, their public shape, and
the create / change / delete actions.

Kind names are the component registry's (contracts.registry.ResourceKind): a config
setting with resource="model" is filled from kind=model, and so on; but mcp_server,
which no setting names: its listed tools are functions (kionga.mcp_tools). Secrets are
write-only: answers say only `secret_set` / `secret_header_names`. Deleting a resource
a published version uses is refused (409 resource_in_use, the versions named).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Literal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Count, QuerySet
from rest_framework import serializers

from contracts.registry import ResourceKind
from kionga import audit, mcp_tools
from kionga.builtin_tools import BUILTIN_TOOLS
from kionga.errors import APIError, not_found
from kionga.models import Project
from kionga.projects import resource_serializers as bodies
from kionga.projects.usage import users_of
from kionga.resource_models import (
    ApiConnection,
    Dataset,
    Function,
    KnowledgeBase,
    McpServer,
    ModelEndpoint,
    ProjectResource,
)

LIST_LIMIT = 1000
PRICE_PLACES = Decimal("0.000001")


def _model_fields(obj: Any) -> dict[str, Any]:
    return {"base_url": obj.base_url, "model_name": obj.model_name,
            "prices": {"prompt_per_1k": float(obj.price_prompt_per_1k),
                       "completion_per_1k": float(obj.price_completion_per_1k)},
            "secret_set": bool(obj.secret)}


def _function_fields(obj: Any) -> dict[str, Any]:
    return {"url": obj.url, "secret_set": bool(obj.secret), "builtin": False}


def _connection_fields(obj: Any) -> dict[str, Any]:
    headers = obj.secret_headers if isinstance(obj.secret_headers, dict) else {}
    return {"base_url": obj.base_url, "allowed_methods": list(obj.allowed_methods or []),
            "allowed_paths": list(obj.allowed_paths or []),
            "secret_header_names": sorted(headers)}


def _tool_dict(server: McpServer, tool: dict[str, Any]) -> dict[str, Any]:
    return {"name": tool.get("name", ""), "function": mcp_tools.function_name(
                server.key, str(tool.get("name", ""))),
            "description": tool.get("description", ""),
            "input_schema": tool.get("input_schema") or {}}


def _mcp_server_fields(obj: Any) -> dict[str, Any]:
    headers = obj.secret_headers if isinstance(obj.secret_headers, dict) else {}
    listed = obj.tools_listed_at.isoformat() if obj.tools_listed_at else None
    return {"url": obj.url, "secret_header_names": sorted(headers),
            "tools": mcp_tool_dicts(obj), "tools_listed_at": listed}


def mcp_tool_dicts(server: McpServer) -> list[dict[str, Any]]:
    tools = server.tools if isinstance(server.tools, list) else []
    return [_tool_dict(server, tool) for tool in tools if isinstance(tool, dict)]


def mcp_function_dicts(project: Project) -> list[dict[str, Any]]:
    """MCP servers' listed tools as the functions a tool node names, with their
    input schemas (for the canvas's inspector)."""
    found = []
    for server in McpServer.objects.filter(project=project).order_by("key")[:LIST_LIMIT]:
        for tool in mcp_tool_dicts(server):
            found.append({"id": tool["function"], "kind": "function",
                          "name": f"{server.name or server.key}: {tool['name']}",
                          "description": tool["description"], "created_at": None,
                          "url": None, "secret_set": False, "builtin": False,
                          "mcp_server": server.key, "input_schema": tool["input_schema"]})
    return found


@dataclass(frozen=True)
class Kind:
    # A registry kind (ResourceKind), or mcp_server.
    name: ResourceKind | Literal["mcp_server"]
    model: type[ProjectResource]
    body: type[serializers.Serializer]
    public: Any = None  # obj -> the kind's own fields
    counts: dict[str, Any] = field(default_factory=dict)  # annotations shown as they are

    def rows(self, project: Project) -> QuerySet[Any]:
        return self.model._default_manager.filter(project=project).annotate(**self.counts)

    def to_dict(self, obj: Any) -> dict[str, Any]:
        found = {"id": obj.key, "kind": self.name, "name": obj.name or obj.key,
                 "description": obj.description, "created_at": obj.created_at.isoformat()}
        found.update(self.public(obj) if self.public else {})
        found.update({name: getattr(obj, name) for name in self.counts})
        return found


KINDS: dict[str, Kind] = {k.name: k for k in [
    Kind("model", ModelEndpoint, bodies.ModelBody, _model_fields),
    Kind("function", Function, bodies.FunctionBody, _function_fields),
    Kind("connection", ApiConnection, bodies.ConnectionBody, _connection_fields),
    Kind("knowledge_base", KnowledgeBase, bodies.KnowledgeBaseBody,
         counts={"document_count": Count("documents")}),
    Kind("dataset", Dataset, bodies.DatasetBody, counts={"object_count": Count("entries")}),
    Kind("mcp_server", McpServer, bodies.McpServerBody, _mcp_server_fields),
]}
KIND_NAMES = list(KINDS)


def builtin_tool_dicts() -> list[dict[str, Any]]:
    """Built-in tools are functions every project has: listed for pickers, not editable."""
    return [{"id": name, "kind": "function", "name": name,
             "description": (tool.__doc__ or "").strip().split("\n")[0],
             "created_at": None, "url": None, "secret_set": False, "builtin": True}
            for name, tool in sorted(BUILTIN_TOOLS.items())]


def list_resources(project: Project, kind: str | None) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for spec in KINDS.values():
        if kind in (None, spec.name):
            rows = spec.rows(project).order_by("key")[:LIST_LIMIT]
            found += [spec.to_dict(obj) for obj in rows]
    if kind in (None, "function"):
        found += builtin_tool_dicts() + mcp_function_dicts(project)
    return found


def check_resource(project: Project, kind: Kind, resource_id: str) -> Any:
    found = kind.rows(project).filter(key=resource_id).first()
    if found is None:
        raise not_found(f"No {kind.name} {resource_id!r} in this project.")
    return found


def _apply(obj: Any, values: dict[str, Any]) -> list[str]:
    """Set the model fields of a validated body; the names of what changed (never
    a secret's value)."""
    changed = []
    for name, value in values.items():
        if name == "id":
            continue
        if name.startswith("price_"):
            value = Decimal(str(value)).quantize(PRICE_PLACES)
        if getattr(obj, name) != value:
            setattr(obj, name, value)
            changed.append(name)
    return changed


def do_create(actor: User, project: Project, kind: Kind, values: dict[str, Any]) -> Any:
    resource_id = values["id"]
    if kind.name == "function" and resource_id in BUILTIN_TOOLS:
        raise _exists(kind, resource_id, "a built-in tool has this name")
    obj = kind.model(project=project, key=resource_id)
    changed = _apply(obj, values)
    try:
        with transaction.atomic():
            obj.save()
    except IntegrityError:
        raise _exists(kind, resource_id, "the ID is taken") from None
    audit.record("resource.created", project=project, actor=actor, target_type=kind.name,
                 target_id=resource_id, details={"fields": sorted(changed)})
    return check_resource(project, kind, resource_id)


def do_update(actor: User, project: Project, kind: Kind, obj: Any,
              values: dict[str, Any]) -> Any:
    if "id" in values and values["id"] != obj.key:
        raise APIError(400, "invalid_request", "id: A resource's ID cannot change (graphs "
                       "name it); create a new one instead.",
                       {"fields": {"id": ["A resource's ID cannot change."]}})
    old_url = getattr(obj, obj.URL_FIELD) if obj.URL_FIELD else ""
    changed = _apply(obj, values)
    changed += obj.forget_on_change(changed)
    # A secret never follows its resource to another scheme, host or port.
    cleared = obj.clear_secrets_if_moved(old_url, set(values))
    if changed or cleared:
        with transaction.atomic():
            obj.save(update_fields=sorted({*changed, *cleared}))
            audit.record("resource.changed", project=project, actor=actor,
                         target_type=kind.name, target_id=obj.key,
                         details={"fields": sorted(changed)})
            if cleared:
                audit.record("resource.secret_cleared", project=project, actor=actor,
                             target_type=kind.name, target_id=obj.key,
                             details={"fields": sorted(cleared),
                                      "reason": "destination_changed"})
    return check_resource(project, kind, obj.key)


def do_delete(actor: User, project: Project, kind: Kind, obj: Any) -> None:
    users = users_of(project, kind.name, obj.key)
    if users:
        named = ", ".join(f"{u.get('design', '?')} v{u.get('number', '?')}" for u in users[:10])
        raise APIError(409, "resource_in_use",
                       f"Published versions use {kind.name} {obj.key!r}: {named}. A published "
                       "version never changes, so its resources stay.", {"used_by": users})
    obj.delete()
    audit.record("resource.deleted", project=project, actor=actor, target_type=kind.name,
                 target_id=obj.key)


def _exists(kind: Kind, resource_id: str, why: str) -> APIError:
    return APIError(409, "resource_exists",
                    f"Cannot create {kind.name} {resource_id!r}: {why}.")
