"""Checks of internal-route requests: lookups scoped to the run, what a resource allows.

A run may use only the resources its graph names (Run.resources, stored at start)
and only in its own project. A resource outside the graph, a missing one and another
project's give the same 404 and message, so a run learns nothing about what exists.
Tool and API calls have side effects: they need a run started with
allow_side_effects (a published version's were approved when it was published).
"""

from __future__ import annotations

import logging
from typing import Any, TypeVar
from urllib.parse import unquote

import httpx

from contracts.registry import ResourceKind
from kionga.errors import APIError, invalid_field
from kionga.resource_models import ApiConnection, ProjectResource
from kionga.secret_box import SecretKeyError
from runs.models import Run

R = TypeVar("R", bound=ProjectResource)
log = logging.getLogger(__name__)

# An empty allowed_methods list means the common, least surprising pair.
DEFAULT_METHODS = ("GET", "POST")
MAX_OBJECT_KEY = 300


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
    return check_found(run, kind, key,
                       model._default_manager.filter(project_id=run.project_id, key=key).first())


def check_found(run: Run, kind: ResourceKind, key: str, found: R | None) -> R:
    """`found`, the resource of the run's project with this key (None: there is none),
    if the run may use it: in its graph's scope, its secrets readable."""
    check_in_scope(run, kind, key)
    if found is None or found.project_id != run.project_id:
        raise missing(kind, key)
    check_secrets_readable(found, kind, key)
    return found


def check_secrets_readable(resource: ProjectResource, kind: ResourceKind, key: str) -> None:
    """Decrypts the resource's secrets now; one that does not decrypt (a wrong key, an
    altered value) is logged for the operator and refused (503), never sent on."""
    try:
        for name in resource.SECRET_FIELDS:
            getattr(resource, name)
    except SecretKeyError as exc:
        log.error("%s", exc)  # names the column, row and key id: never a value
        raise APIError(503, "resource_unavailable",
                       f"The {kind} {key!r} cannot be used: the gateway cannot decrypt its "
                       "secret (its operator has the details in the log).") from None


def check_side_effects(run: Run, what: str) -> None:
    """403 side_effects_not_allowed unless the run may call tools and APIs."""
    if not run.allow_side_effects:
        raise APIError(403, "side_effects_not_allowed",
                       f"{what} has side effects and this run was started without "
                       "allow_side_effects; start it with allow_side_effects: true.")


def check_object_key(params: Any) -> str:
    key = params.get("key")
    if not isinstance(key, str) or not key or len(key) > MAX_OBJECT_KEY:
        raise invalid_field("key", f"Send the object's key as ?key= (1 to {MAX_OBJECT_KEY} "
                                   "characters).")
    return key


def check_connection_call(connection: ApiConnection, method: str, path: str) -> str:
    """The URL of an API connection call (serializers.ConnectionCallSerializer checked the
    body), or 403 for a method the connection does not allow, a path escaping its base
    or outside its allowed_paths (prefixes, matched at a "/" boundary; none: any)."""
    allowed = [str(m).upper() for m in connection.allowed_methods or DEFAULT_METHODS]
    if method not in allowed:
        raise denied(f"{method} is not allowed on connection {connection.key!r}.")
    url = connection_url(connection, path)
    prefixes = [p for p in connection.allowed_paths or [] if isinstance(p, str)]
    only_path = unquote(path.split("?", 1)[0])
    if prefixes and not any(_below(only_path, prefix) for prefix in prefixes):
        raise denied(f"{path!r} is not among the allowed paths of connection "
                     f"{connection.key!r}.")
    return url


def _below(path: str, prefix: str) -> bool:
    prefix = prefix.rstrip("/")
    return not prefix or path == prefix or path.startswith(prefix + "/")


def connection_url(connection: ApiConnection, path: str) -> str:
    """base_url + path, where path can only go below the base URL."""
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
