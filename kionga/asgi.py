"""ASGI entry point of the public listener: ``uvicorn kionga.asgi:application``.

Event streams and notices (SSE) go to Django's ASGI handler: they wait on Redis without holding
a thread. Every other request is plain request/response work, served by Django's
WSGI handler in a worker thread (a2wsgi): one thread hop per request instead of
Django's ASGI path, which costs several hops and ~2 ms more for each sync view.
Before either, the apps' hot routes (kionga.hot_routes: starting a run, opening its
stream) are served as plain ASGI. Outermost, the client's address is taken from
X-Forwarded-For when a trusted proxy sent it (kionga.proxies, KIONGA_TRUSTED_PROXIES).
"""

from __future__ import annotations

import os
from typing import Any

from a2wsgi import WSGIMiddleware
from django.conf import settings
from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application

from kionga import hot_routes, secret_box
from kionga.http_limits import RequestLimits
from kionga.proxies import behind_trusted_proxies

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kionga.settings")

streams = get_asgi_application()
requests = WSGIMiddleware(get_wsgi_application(), workers=16)  # type: ignore[arg-type]
# No listener without the keys resource secrets are stored under: a clear refusal
# to start instead of calls that cannot authenticate (kionga.secret_box).
secret_box.configured_keys()


def wants_stream(scope: dict[str, Any]) -> bool:
    # An events route, a project's notices (kionga.projects.notice_views), or a run
    # start that answers with the run's stream.
    path = scope["path"] if scope["type"] == "http" else ""
    if not (path.endswith(("/events", "/notices"))
            or (scope.get("method") == "POST" and path.endswith("/runs"))):
        return False
    return any(name == b"accept" and b"text/event-stream" in value
               for name, value in scope.get("headers", ()))


async def django(scope: dict[str, Any], receive: Any, send: Any) -> None:
    handler = streams if scope["type"] != "http" or wants_stream(scope) else requests
    await handler(scope, receive, send)  # type: ignore[arg-type]


async def dispatch(scope: dict[str, Any], receive: Any, send: Any) -> None:
    # The apps' hot routes (kionga.hot_routes) first: they hand anything else to Django.
    hot = hot_routes.match(scope)
    if hot is not None:
        await hot(scope, receive, send, django)
        return
    await django(scope, receive, send)


# Body size, chunked bodies and header count, before either handler (kionga.http_limits).
application = behind_trusted_proxies(
    RequestLimits(dispatch, settings.KIONGA_MAX_BODY_BYTES),  # type: ignore[arg-type]
    settings.KIONGA_TRUSTED_PROXIES)
