"""The internal listener's middleware, with their hooks run where the request is.

For an async chain (kionga.internal_asgi's views on the event loop) Django runs each
hook of a MiddlewareMixin through sync_to_async, in asgiref's one shared thread: a
resource call made eight round trips to that one thread, which every call in flight
queues on. These hooks only read the request and write headers (no I/O, no database),
so here the same classes' hooks are called directly by the coroutine chain; a sync
chain (the listener's worker threads) calls them as ever.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.http.response import HttpResponseBase
from django.middleware import clickjacking, common, security
from django.utils.deprecation import MiddlewareMixin

from kionga import csp_header, middleware


def on_loop(hooks: type[MiddlewareMixin]) -> type[MiddlewareMixin]:
    """`hooks` whose async call runs its process_request and process_response inline
    (as MiddlewareMixin.__acall__ does, without the thread hop)."""

    class OnLoop(hooks):  # type: ignore[valid-type,misc]
        async def __acall__(self, request: HttpRequest) -> HttpResponseBase:
            response: Any = None
            if hasattr(self, "process_request"):
                response = self.process_request(request)
            response = response or await self.get_response(request)
            if hasattr(self, "process_response"):
                response = self.process_response(request, response)
            return response  # type: ignore[no-any-return]

    OnLoop.__name__ = OnLoop.__qualname__ = hooks.__name__
    return OnLoop


ApiJsonErrorMiddleware = on_loop(middleware.ApiJsonErrorMiddleware)
SecurityMiddleware = on_loop(security.SecurityMiddleware)
PolicyOnceMiddleware = on_loop(csp_header.PolicyOnceMiddleware)
CommonMiddleware = on_loop(common.CommonMiddleware)
XFrameOptionsMiddleware = on_loop(clickjacking.XFrameOptionsMiddleware)
