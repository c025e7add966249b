"""Django's ASGI handler for the run routes that answer event streams, with the
middleware chain and the view in one thread hop.

Django's own ASGI handler loads the middleware chain for async use: a sync-only part of
it (or a sync view) is adapted with sync_to_async per middleware and view, each hop in
a thread made for the request. Here the same chain (settings.MIDDLEWARE, loaded by
Django's BaseHandler) is loaded for sync use and run, with the view, by one call of
Django's `get_response` in one of kionga.pooled's reused threads, which hands its
database connection back after the call. Only the stream itself is served by the event
loop: Django's handler sends the view's StreamingHttpResponse and iterates its async
content there, holding no thread. Views served this way are sync (their database
work happens in that one hop); a coroutine view would be run on a loop of its own.
"""

from __future__ import annotations

from typing import Any

from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.base import BaseHandler
from django.http import HttpRequest, HttpResponseBase


class PooledASGIHandler(ASGIHandler):
    def __init__(self) -> None:
        from kionga.pooled import pooled  # after django.setup() (get_asgi_application)

        BaseHandler.__init__(self)
        self.load_middleware(is_async=False)
        self._get_response = pooled(self.get_response)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        # No per-request ThreadSensitiveContext (a new thread for each request): nothing
        # here runs thread-sensitive work but Django's two signal calls around it.
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not "
                             f"{scope['type']}.")
        await self.handle(scope, receive, send)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        response: HttpResponseBase = await self._get_response(request)
        return response
