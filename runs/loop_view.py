"""DRF function views that run on the event loop (the internal listener's resource calls).

`loop_view(methods)` is `@api_view(methods)` for a coroutine function: the same
APIView class (the decorators' authentication, permissions, parsers, renderers and
schema; the same exception handler and error shape), whose `initial` step
(authentication, permissions, throttles: database and Redis reads) runs in one of
kionga.pooled's threads (`in_thread`), which hands its database connection back before
the view awaits anything. The view then waits on an upstream holding neither a thread
nor a database connection. kionga.internal_asgi serves such views on its event loop.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar

from asgiref.sync import AsyncToSync, sync_to_async
from django.http import HttpRequest
from django.http.response import HttpResponseBase
from rest_framework.decorators import api_view
from rest_framework.request import Request
from rest_framework.views import APIView

from kionga.loop_handler import OWN_LOOP
from kionga.pooled import pooled

P = ParamSpec("P")
T = TypeVar("T")


def in_thread(fn: Callable[P, T]) -> Callable[P, Awaitable[T]]:
    """kionga.pooled(fn), unless a synchronous caller is blocked waiting for this event
    loop (async_to_sync: Django's test client, a command calling a view): then in that
    caller's thread, with its connection and transaction, as asgiref's thread-sensitive
    mode runs it (kionga.internal_asgi's loop has no such caller)."""
    if not OWN_LOOP.get() and getattr(AsyncToSync.executors, "current", None) is not None:
        return sync_to_async(fn, thread_sensitive=True)
    return pooled(fn)


class LoopAPIView(APIView):
    async def dispatch(self, request: HttpRequest, *args: Any,  # type: ignore[override]
                       **kwargs: Any) -> HttpResponseBase:
        # APIView.dispatch, with the blocking steps in a pooled thread and the handler
        # awaited.
        self.args, self.kwargs = args, kwargs
        drf_request = self.initialize_request(request, *args, **kwargs)
        self.request = drf_request
        self.headers = self.default_response_headers
        try:
            await in_thread(self.initial)(drf_request, *args, **kwargs)
            method = (drf_request.method or "").lower()
            handler = (getattr(self, method, self.http_method_not_allowed)
                       if method in self.http_method_names else self.http_method_not_allowed)
            response = handler(drf_request, *args, **kwargs)
            if inspect.isawaitable(response):
                response = await response
        except Exception as exc:
            response = self.handle_exception(exc)
        answer = self.finalize_response(drf_request, response, *args, **kwargs)
        let_go(self, drf_request)
        return answer


def let_go(view: APIView, request: Request) -> None:
    """Break the reference cycle DRF leaves between a view and its request (the view's
    `request`; the request's parser context, holding the view and the request itself),
    once the view is done: nothing parses the body after it. A resource call lives for
    seconds, so its objects age out of the young generations and, left in a cycle,
    would wait for a full collection (runner/heap.py) instead of being freed as the
    call ends. (A Response's renderer context, needed until it is rendered, is
    kionga.loop_handler's.)"""
    request.parser_context = {}
    view.__dict__.pop("request", None)


def loop_view(methods: list[str]) -> Callable[[Callable[..., Awaitable[Any]]], Any]:
    """@api_view(methods) for a coroutine function (see the module's docstring)."""

    def decorator(func: Callable[..., Awaitable[Any]]) -> Any:
        assert inspect.iscoroutinefunction(func), f"{func.__name__} is not a coroutine"
        wrapped: Any = api_view(methods)(func)

        async def handler(self: APIView, *args: Any, **kwargs: Any) -> Any:
            return await func(*args, **kwargs)

        cls: Any = type(wrapped.cls.__name__, (LoopAPIView, wrapped.cls),
                   {method.lower(): handler for method in methods})
        cls.__module__ = func.__module__
        return cls.as_view()

    return decorator
