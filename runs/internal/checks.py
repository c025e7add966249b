"""Validation of internal-route requests: lookups scoped to the run, bodies.

A run may use only the resources its graph names (Run.resources, stored at start)
and only in its own project. A resource outside the graph, a missing one and another
project's give the same 404 and message, so a run learns nothing about what exists.
Tool and API calls have side effects: they need a run started with
allow_side_effects (a published version's were approved when it was published).
"""

from __future__ import annotations

from typing import Any, TypeVar
from urllib.parse import unquote

import httpx

from contracts.registry import ResourceKind
from kionga.errors import APIError, check_json_object
from kionga.resource_models import ApiConnection, ProjectResource
from runs.models import Run

R = TypeVar("R", bound=ProjectResource)

ROLES = frozenset({"system", "user", "assistant"})
METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"})
# An empty allowed_methods list means the common, least surprising pair.
DEFAULT_METHODS = ("GET", "POST")
MAX_MESSAGES = 1000
MAX_QUERY = 1000
MAX_PATH = 2000
MAX_SEARCH_LIMIT = 20
DEFAULT_SEARCH_LIMIT = 4


def invalid(message: str) -> APIError:
    return APIError(400, "invalid_request", message)


def denied(message: str) -> APIError:
    return APIError(403, "resource_denied", message)


NAMES: dict[ResourceKind, str] = {
    "model": "model", "function": "function", "connection": "API connection",
    "knowledge_base": "knowledge base", "dataset": "dataset", "version": "published version",
}


def missing(kind: ResourceKind, key: str) -> APIError:
    return APIError(404, "resource_denied",
                    f"This run has no {NAMES[kind]} {key!r}: its graph names no such "
                    f"{NAMES[kind]} of its project.")


def in_scope(run: Run, kind: ResourceKind) -> list[str]:
    """The IDs of `kind` the run's graph names (nothing for a malformed scope)."""
    allowed = run.resources.get(kind) if isinstance(run.resources, dict) else None
    return [key for key in allowed if isinstance(key, str)] if isinstance(allowed, list) else []


def check_in_scope(run: Run, kind: ResourceKind, key: str) -> None:
    if key not in in_scope(run, kind):
        raise missing(kind, key)


def check_resource(run: Run, model: type[R], kind: ResourceKind, key: str) -> R:
    check_in_scope(run, kind, key)
    found = model._default_manager.filter(project_id=run.project_id, key=key).first()
    if found is None:
        raise missing(kind, key)
    return found


def check_side_effects(run: Run, what: str) -> None:
    """403 side_effects_not_allowed unless the run may call tools and APIs."""
    if not run.allow_side_effects:
        raise APIError(403, "side_effects_not_allowed",
                       f"{what} has side effects and this run was started without "
                       "allow_side_effects; start it with allow_side_effects: true.")


def check_messages(body: Any) -> list[dict[str, str]]:
    """The chat messages of a predict call, reduced to role and content."""
    messages = check_json_object(body).get("messages")
    if not isinstance(messages, list) or not messages or len(messages) > MAX_MESSAGES:
        raise invalid(f"messages must be a list of 1 to {MAX_MESSAGES} messages.")
    clean = []
    for index, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES or not isinstance(
            message.get("content"), str
        ):
            raise invalid(f"messages.{index} must be {{role: system|user|assistant, "
                          f"content: string}}.")
        clean.append({"role": message["role"], "content": message["content"]})
    return clean


def check_search(body: Any) -> tuple[str, int]:
    body = check_json_object(body)
    query, limit = body.get("query"), body.get("limit", DEFAULT_SEARCH_LIMIT)
    if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY:
        raise invalid(f"query must be a non-empty string of at most {MAX_QUERY} characters.")
    if isinstance(limit, bool) or not isinstance(limit, int) or not (
        1 <= limit <= MAX_SEARCH_LIMIT
    ):
        raise invalid(f"limit must be an integer from 1 to {MAX_SEARCH_LIMIT}.")
    return query, limit


def check_object_key(params: Any) -> str:
    key = params.get("key")
    if not isinstance(key, str) or not key or len(key) > 300:
        raise invalid("Send the object's key as ?key= (1 to 300 characters).")
    return key


def check_connection_call(connection: ApiConnection, body: Any) -> tuple[str, str, Any]:
    """(method, url, body) of an API connection call, or 400/403."""
    body = check_json_object(body)
    method = body.get("method")
    if not isinstance(method, str) or method.upper() not in METHODS:
        raise invalid(f"method must be one of {', '.join(sorted(METHODS))}.")
    method = method.upper()
    allowed = [str(m).upper() for m in connection.allowed_methods or DEFAULT_METHODS]
    if method not in allowed:
        raise denied(f"{method} is not allowed on connection {connection.key!r}.")
    return method, connection_url(connection, body.get("path")), body.get("body")


def connection_url(connection: ApiConnection, path: Any) -> str:
    """base_url + path, where path can only go below the base URL."""
    if not isinstance(path, str) or not path.startswith("/") or len(path) > MAX_PATH:
        raise invalid(f"path must start with '/' (at most {MAX_PATH} characters).")
    decoded = unquote(path)
    if (path.startswith("//") or ".." in decoded or "\\" in decoded
            or any(ord(ch) < 32 or ord(ch) == 127 for ch in decoded)):
        raise denied("path must stay below the connection's base URL.")
    base = connection.base_url.rstrip("/")
    url = base + path
    # Belt and braces: the URL httpx will use must still be the base's origin and path.
    parsed, origin = httpx.URL(url), httpx.URL(base + "/")
    if (parsed.scheme, parsed.host, parsed.port) != (origin.scheme, origin.host, origin.port) \
            or not parsed.path.startswith(origin.path):
        raise denied("path must stay below the connection's base URL.")
    return url
