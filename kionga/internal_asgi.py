"""ASGI entry point of the internal listener: ``uvicorn kionga.internal_asgi:application``.

It runs as its own process with kionga.settings_internal (another ROOT_URLCONF),
so the two listeners can never share routes by accident. Two Django handlers, one
URLconf: a route whose view is a coroutine (the resource calls that wait on an
upstream: runs.loop_view) is served on the event loop, so a thousand calls waiting on
their upstreams hold no thread and no database connection; every other route is
plain request/response work for Django's WSGI handler in worker threads (a2wsgi),
one thread hop each, which no upstream call can occupy (/healthz stays prompt).
"""

from __future__ import annotations

import functools
import os
from typing import Any

from a2wsgi import WSGIMiddleware
from asgiref.sync import iscoroutinefunction
from django.conf import settings
from django.core.wsgi import get_wsgi_application
from django.urls import Resolver404, resolve

from kionga import secret_box, start_checks
from kionga.http_limits import RequestLimits
from kionga.loop_handler import LoopHandler
from runner import tracing

# Forced, not setdefault: an inherited DJANGO_SETTINGS_MODULE=kionga.settings would
# silently expose the whole public API (and admin) on the internal port.
os.environ["DJANGO_SETTINGS_MODULE"] = "kionga.settings_internal"


TRACE_SERVICE = "kionga-internal"

requests = WSGIMiddleware(get_wsgi_application(), workers=16)  # type: ignore[arg-type]
# No listener without the keys resource secrets are stored under: a clear refusal
# to start instead of calls that cannot authenticate (kionga.secret_box).
secret_box.configured_keys()
coroutines = LoopHandler()


@functools.lru_cache(maxsize=4096)
def _view_is_coroutine(path: str) -> bool:
    # Cached: the runner calls the same few paths (a project's model keys) over and
    # over; the URLconf is fixed for the process's life.
    try:
        return iscoroutinefunction(resolve(path).func)
    except (Resolver404, ValueError, UnicodeError):
        return False


def on_loop(scope: dict[str, Any]) -> bool:
    """Whether the URLconf routes this request to a coroutine view."""
    return scope["type"] == "http" and _view_is_coroutine(scope["path"])


async def dispatch(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        # Its calls leave nothing in reference cycles (tests/test_internal_call_freed.py).
        await start_checks.lifespan(scope, receive, send, spaced=True)
        return
    traceparent = _traceparent(scope) if tracing.enabled() else None
    if traceparent is None:
        await _handle(scope, receive, send)
        return
    # A traced run's resource call (runner.tracing): a span, child of the run's span.
    # Its route's pattern only, never the path's values or any header.
    with tracing.request_span(TRACE_SERVICE, "kionga.resource.call", traceparent,
                              {"http.request.method": str(scope.get("method")),
                               "http.route": _route(scope.get("path", ""))}):
        await _handle(scope, receive, send)


async def _handle(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if on_loop(scope):
        await coroutines(scope, receive, send)
    else:
        await requests(scope, receive, send)  # type: ignore[arg-type]


def _traceparent(scope: dict[str, Any]) -> str | None:
    found = [v for k, v in scope.get("headers", ()) if k.lower() == b"traceparent"]
    return tracing.valid_traceparent(found[0].decode("latin-1")) if len(found) == 1 else None


def _route(path: str) -> str:
    try:
        return str(resolve(path).route)
    except (Resolver404, ValueError, UnicodeError):
        return "unknown"


application = RequestLimits(dispatch, settings.KIONGA_MAX_BODY_BYTES)  # type: ignore[arg-type]
