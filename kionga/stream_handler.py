"""Django's ASGI handler for the run routes that answer event streams, with the
middleware chain and the view in one thread hop.

Django's own ASGI handler loads the middleware chain for async use: a sync-only part of
it (or a sync view) is adapted with sync_to_async per middleware and view, each hop in
a thread made for the request, and request_started and the answer's close are a hop
each too. Here the same chain (settings.MIDDLEWARE, loaded by Django's BaseHandler) is
loaded for sync use and run, with the view, by one call of Django's `get_response` in
one of kionga.pooled's reused threads, which hands its database connection back after
the call; the request's edges are kionga.loop_handler's (the signals and the close on
the loop, an EventStream written as its chunks come, its LastChunk with the answer's
end). Only the stream itself is served by the event loop, holding no thread. Views
served this way are sync (their database work happens in that one hop); a coroutine
view would be run on a loop of its own.
"""

from __future__ import annotations

from django.core.handlers.base import BaseHandler
from django.http import HttpRequest, HttpResponseBase

from kionga.loop_handler import LoopEdgesHandler


class PooledASGIHandler(LoopEdgesHandler):
    def __init__(self) -> None:
        from kionga.pooled import pooled  # after django.setup() (get_asgi_application)

        BaseHandler.__init__(self)
        self.load_middleware(is_async=False)
        self._get_response = pooled(self.get_response)

    async def get_response_async(self, request: HttpRequest) -> HttpResponseBase:
        response: HttpResponseBase = await self._get_response(request)
        return response
