"""ASGI entry point of the public listener: ``uvicorn kionga.asgi:application``.

Channels routes each connection (ProtocolTypeRouter, then URLRouter by path) to one of
three ways into the same Django project (one MIDDLEWARE, one URLconf), so every
request passes Django's middleware, DRF and the views' rules whichever way it takes:

- `streams`: Django's ASGI handler with the middleware chain and the view in one
  pooled thread hop (kionga.stream_handler), for a run's event streams (`…/events`, a
  run start with `Accept: text/event-stream`): they wait on Redis without holding a
  thread (runs.views), and the request's edges on the loop (kionga.loop_handler: a
  stream's last chunk goes out with the answer's end).
- `notices`: Django's own ASGI handler, for a project's notices (django-eventstream).
- `requests`: Django's WSGI handler in a worker thread (kionga.wsgi_hop), for every
  other request: one thread hop per request instead of Django's ASGI path, which costs
  several hops and ~2 ms more for each sync view. A HEAD is the route's GET without
  its body (`head_as_get`), on every route alike (a stream's HEAD is the events
  view's own: it takes no stream place).

Around the router: the request limits (kionga.http_limits: body size, chunked bodies,
header count, and the body read whole, within KIONGA_BODY_TIMEOUT_SECONDS, before a
worker thread takes the request), and outermost the client's address from
X-Forwarded-For when a trusted proxy sent it (kionga.proxies, KIONGA_TRUSTED_PROXIES).
"""

from __future__ import annotations

import os
from typing import Any

from channels.routing import ProtocolTypeRouter, URLRouter
from django.conf import settings
from django.core.asgi import get_asgi_application
from django.core.wsgi import get_wsgi_application
from django.urls import path, re_path

from kionga import secret_box, start_checks
from kionga.http_limits import RequestLimits
from kionga.proxies import behind_trusted_proxies
from kionga.stream_handler import PooledASGIHandler
from kionga.wsgi_hop import WSGIInOneHop

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kionga.settings")

notices = get_asgi_application()
streams = PooledASGIHandler()
requests = WSGIInOneHop(get_wsgi_application(), workers=16)
# No listener without the keys resource secrets are stored under: a clear refusal
# to start instead of calls that cannot authenticate (kionga.secret_box).
secret_box.configured_keys()


def accepts_stream(scope: dict[str, Any]) -> bool:
    return any(name == b"accept" and b"text/event-stream" in value
               for name, value in scope.get("headers", ()))


def negotiated(*methods: str, of_notices: bool = False) -> Any:
    """An ASGI app: `streams` (`notices` for the notices route) for these methods with
    `Accept: text/event-stream`, `requests` otherwise (the route's JSON answers, its
    refusals of other methods)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("method") in methods and accepts_stream(scope):
            await (notices if of_notices else streams)(scope, receive, send)
        elif scope.get("method") == "HEAD":
            await head_as_get(scope, receive, send)
        else:
            await requests(scope, receive, send)  # type: ignore[arg-type]

    return app


async def head_as_get(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """HEAD is the route's GET without the body, on every route (DRF's function views
    would answer 405): Django answers the GET, its body is not sent."""

    async def bodiless(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            if message.get("more_body", False):
                return
            message = {"type": "http.response.body", "body": b"", "more_body": False}
        await send(message)

    await requests({**scope, "method": "GET"}, receive, bodiless)  # type: ignore[arg-type]


http = URLRouter([
    path("api/v1/agent-designs/<uuid:design_id>/runs/<uuid:run_id>/events",
         negotiated("GET", "HEAD")),
    path("api/v1/agent-designs/<uuid:design_id>/runs", negotiated("POST")),
    # A project's notices (kionga.projects.notice_views: django-eventstream's channel).
    path("api/v1/projects/<int:project_id>/notices", negotiated("GET", of_notices=True)),
    re_path(r"", negotiated()),  # every other request: `requests`
])

router = ProtocolTypeRouter({"http": http, "lifespan": start_checks.lifespan})

application = behind_trusted_proxies(
    RequestLimits(router, settings.KIONGA_MAX_BODY_BYTES),  # type: ignore[arg-type]
    settings.KIONGA_TRUSTED_PROXIES)
