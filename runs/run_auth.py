"""Run-credential authentication, for the internal listener only.

``Authorization: Bearer <run credential>`` authenticates as the person who started
the run, inside the run's project. The credential carries no rights of its own: the
person's membership is re-read on every call, so removing them (or making them a
viewer) stops the run's next resource call with 403 ``resource_denied``.

A credential dies with its run, at once: when the runner frees the run's capacity
slot (after the run's last event is in Redis; the ingester stores it later) or when
its lease runs out (runner gone), and when a cancel is requested (401
``run_cancelled``, which tells the runner to wait for its cancel rather than fail).

Nothing else authenticates here: API tokens and sessions get 401, and the public
listener's BearerTokenAuthentication does not know run credentials.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import redis
from django.contrib.auth.models import AnonymousUser, User
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.utils import extend_schema
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.decorators import api_view, authentication_classes, permission_classes
from rest_framework.permissions import BasePermission
from rest_framework.request import Request

from contracts.registry import ResourceKind
from deployments.credentials import AGENT_CREDENTIAL_PREFIX
from kionga.access import ROLE_RANK
from kionga.errors import APIError, ErrorCode
from kionga.models import Role
from kionga.redis_client import sync_redis
from kionga.resource_models import ProjectResource
from runner import protocol
from runner.resources import RUN_CANCELLED
from runs.agent_auth import agent_turn
from runs.credentials import find_credential
from runs.internal import checks
from runs.loop_view import in_thread, loop_view
from runs.models import Run

REALM = 'Bearer realm="internal"'


@dataclass(frozen=True)
class RouteResource:
    """The resource a route acts on: of this model and kind, its key the URL argument
    `argument`. RunCredentialAuthentication reads it with the credential."""

    model: type[ProjectResource]
    kind: ResourceKind
    argument: str


class RunCredentialAuthentication(BaseAuthentication):
    """Sets request.user to run.created_by and request.auth to the Run; 401 otherwise.

    A deployed agent's credential (`kag_`, runs.agent_auth) with the header
    X-Kionga-Turn authenticates as that agent's open turn: request.auth is the turn's
    Run, request.user is anonymous (an agent is nobody's person).

    A route with a resource (run_view's `resource`) gets a subclass that reads that
    resource in the credential's statement; route_resource() checks and returns it.
    """

    resource: ClassVar[RouteResource | None] = None

    def authenticate(self, request: Request) -> tuple[User | AnonymousUser, Run]:
        parts = get_authorization_header(request).split()
        # Unlike the public API there is no fallback (no session): a missing header is 401.
        if len(parts) != 2 or parts[0].lower() != b"bearer":
            raise invalid_credential("Send 'Authorization: Bearer <run credential>'.")
        raw = parts[1].decode("latin-1")
        if raw.startswith(AGENT_CREDENTIAL_PREFIX):
            return AnonymousUser(), agent_turn(request, raw)
        wanted = self.resource
        key = _route_key(request, wanted) if wanted is not None else ""
        found = find_credential(raw, None if wanted is None else wanted.model, key)
        if found is None:
            raise invalid_credential("The run credential is unknown, revoked or its run ended.")
        run = found.run
        if not found.live or not in_flight(run):
            if cancel_requested(run):
                raise invalid_credential("The run was cancelled.", RUN_CANCELLED)
            raise invalid_credential("The run credential is unknown, revoked or its run ended.")
        if run.created_by is None:
            # The person was deleted: nobody's grants left to inherit.
            raise resource_denied("The person who started this run no longer exists.")
        # The starter's grant, read with the credential: after every 401, as DRF would
        # check a permission (403 resource_denied).
        check_grant(run.created_by, found.starter_role)
        if wanted is not None:
            request._route_row = found.resource  # type: ignore[attr-defined]
        return run.created_by, run

    def authenticate_header(self, request: Request) -> str:
        return REALM


class HasLiveRunGrant(BasePermission):
    """A run credential authenticated the call. Its grant (the run's starter still
    active and an editor or admin of the run's project) is checked with it, by
    RunCredentialAuthentication, from the same read; an agent turn's grant is its live
    agent credential."""

    def has_permission(self, request: Request, view: Any) -> bool:
        if not isinstance(request.auth, Run):  # only RunCredentialAuthentication authenticates
            raise invalid_credential("A run credential is required.")
        return True


def in_flight(run: Run) -> bool:
    """Whether the run still holds its capacity slot: the runner frees it once the run's
    last event is written, before the ingester stores the end."""
    return bool(_redis(lambda client: protocol.slot_alive(client, str(run.pk))))


def cancel_requested(run: Run) -> bool:
    return bool(_redis(lambda client: client.exists(protocol.cancel_key(str(run.pk)))))


def _redis(read: Callable[[redis.Redis], Any]) -> Any:
    try:
        return read(sync_redis())
    except redis.RedisError:
        # Unknown, so no answer: the runner retries resource_unavailable.
        raise APIError(503, "resource_unavailable",
                       "The run's state cannot be read (Redis is unreachable); retry.") from None


def check_grant(starter: User | None, role: str | None) -> None:
    """403 resource_denied unless the run's starter, with this role in the run's project
    (None: not a member), may still run things there."""
    if (starter is None or not starter.is_active
            or ROLE_RANK.get(role or "", 0) < ROLE_RANK[Role.EDITOR]):
        raise resource_denied("The person who started this run may no longer run agents "
                              "in its project.")


def run_view(methods: list[str], resource: RouteResource | None = None,
             **schema: Any) -> Callable[[Callable[..., Any]], Any]:
    """@api_view for the internal listener: run credential only, live grant checked;
    a coroutine function becomes a view served on the event loop (runs.loop_view).
    `resource`: the route's resource, read with the credential (route_resource)."""

    def wrap(func: Callable[..., Any]) -> Any:
        func = permission_classes([HasLiveRunGrant])(func)
        authentication: type[RunCredentialAuthentication] = RunCredentialAuthentication
        if resource is not None:
            authentication = type("RunCredentialAuthentication", (RunCredentialAuthentication,),
                                  {"resource": resource, "__module__": __name__})
        func = authentication_classes([authentication])(func)
        # A coroutine view waits on its upstream on the event loop (runs.loop_view).
        view = loop_view if inspect.iscoroutinefunction(func) else api_view
        return extend_schema(**schema)(view(methods)(func))

    return wrap


def run_of(request: Request) -> Run:
    """The run whose credential authenticated request (run_view guarantees one)."""
    assert isinstance(request.auth, Run)
    return request.auth


async def route_resource(request: Request) -> Any:
    """The resource of the route's run_view(resource=...), if the run may use it
    (runs.internal.checks.check_found: 404 resource_denied otherwise). Read with the
    run credential; an agent's turn (no run credential) reads it now."""
    run = run_of(request)
    authenticator = request.successful_authenticator
    wanted = getattr(authenticator, "resource", None)
    assert isinstance(wanted, RouteResource), "the route's run_view names no resource"
    key = _route_key(request, wanted)
    if not hasattr(request, "_route_row"):
        return await in_thread(checks.check_resource)(run, wanted.model, wanted.kind, key)
    return checks.check_found(run, wanted.kind, key, request._route_row)


def _route_key(request: Request, wanted: RouteResource) -> str:
    return str(request.parser_context["kwargs"][wanted.argument])


def invalid_credential(message: str,
                       code: ErrorCode = "invalid_credential") -> APIError:
    error = APIError(401, code, message)
    # Read by kionga.errors when rendering: a 401 should say how to authenticate.
    error.auth_header = REALM  # type: ignore[attr-defined]
    return error


def resource_denied(message: str) -> APIError:
    return APIError(403, "resource_denied", message)


class RunCredentialScheme(OpenApiAuthenticationExtension):
    target_class = "runs.run_auth.RunCredentialAuthentication"
    match_subclasses = True  # a route's, reading its resource (run_view)
    name = "runCredential"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "bearerFormat": "krc_<run credential>"}
