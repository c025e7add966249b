"""Django's ASGI handler for the views the internal listener serves on its event loop
(kionga.internal_asgi) and for the public listener's event streams
(kionga.stream_handler), without the per-request work a thread would do for nothing.

Django's handler runs a request's synchronous edges in threads: request_started's
receivers before, the response's close (request_finished's receivers) after, each a
hop to asgiref's shared thread that every call in flight queues on; and it writes a
streamed answer through four layers of async generators per piece. Here:

- request_started is not sent, and request_finished (the response's close) is sent
  on the loop: their receivers (Django's reset_queries, close_old_connections,
  close_caches, reset_urlconf: LOOP_SAFE_RECEIVERS) look after the current thread's
  connections and URLconf, and the loop has no connection (Django refuses the ORM
  there; views' database work goes to kionga.pooled, whose threads hand their
  connections back after each call) and sets the URLconf for each request;
- an EventStream's events are written as they come, one body message each, the
  iterator closed however the answer ends (as Django's aclosing); a LastChunk
  (kionga.stream_end) goes out with the end of the answer;
- everything else (reading the body, the request, the disconnect watch that cancels
  a view whose client left, the middleware chain, other responses) is Django's own.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import AsyncGenerator
from contextlib import aclosing
from typing import Any, Final

from django.core import signals
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.http import StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.urls import set_script_prefix

from kionga.stream_end import LastChunk

# The receivers of request_started and request_finished that have nothing to do on
# the loop or may run there (see the module's docstring); another one must be
# considered before it is added (tests/test_internal_loop_handler.py).
LOOP_SAFE_RECEIVERS: Final = frozenset({
    "django.db.reset_queries", "django.db.close_old_connections",
    "django.core.cache.close_caches", "django.core.handlers.base.reset_urlconf"})

# True in a request LoopHandler serves: on the listener's own event loop, where no
# synchronous caller is blocked waiting for the loop. runs.loop_view.in_thread then
# knows so without asking asgiref (a lookup that raises and formats an AttributeError
# each time the answer is no).
OWN_LOOP: Final = contextvars.ContextVar("kionga.loop_handler.own_loop", default=False)


class EventStream(StreamingHttpResponse):
    """A text/event-stream answer of `events` (bytes, each one or more whole events).
    LoopHandler writes each as it comes; any other handler (Django's test client)
    streams it as the StreamingHttpResponse it is."""

    def __init__(self, events: AsyncGenerator[bytes, None], **kwargs: Any) -> None:
        super().__init__(events, content_type="text/event-stream", **kwargs)
        self.events = events


def response_headers(response: HttpResponseBase) -> list[tuple[bytes, bytes]]:
    """The response's headers and cookies as ASGI wants them (Django's own encoding)."""
    headers = [(name.encode("ascii") if isinstance(name, str) else bytes(name),
                value.encode("latin1") if isinstance(value, str) else bytes(value))
               for name, value in response.items()]
    headers.extend((b"Set-Cookie", cookie.output(header="").encode("ascii").strip())
                   for cookie in response.cookies.values())
    return headers


async def watch_disconnect(receive: Any) -> None:
    """Return when the client is gone. Django's listen_for_disconnect raises
    RequestAborted instead, and uvicorn says http.disconnect after every answer: each
    request left an exception whose traceback held the request's frames, its task and
    everything they refer to in a reference cycle, freed only by a full collection once
    a long call had aged (runner/heap.py)."""
    message = await receive()
    if message["type"] != "http.disconnect":
        raise AssertionError(f"Invalid ASGI message after request body: {message['type']}")


def let_go_of_context(response: HttpResponseBase) -> None:
    """A sent DRF Response refers to itself, its view and its request through its
    renderer context: emptied, they are freed by reference counts, not left in a cycle
    for a full collection (runs.loop_view.let_go breaks the view's and the request's)."""
    context = getattr(response, "renderer_context", None)
    if isinstance(context, dict):
        context.clear()


class LoopEdgesHandler(ASGIHandler):
    """Django's ASGI handler without its per-request thread (ThreadSensitiveContext:
    one thread made for the request and kept until it ends, one idle thread per call in
    flight) and without thread hops for the signals (see the module's docstring). How
    the view is reached is the subclass's: LoopHandler on the loop, the public
    listener's stream handler (kionga.stream_handler) in one pooled thread hop."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            raise ValueError(f"Django can only handle ASGI/HTTP connections, not "
                             f"{scope['type']}.")
        await self.handle(scope, receive, send)

    async def handle(self, scope: Any, receive: Any, send: Any) -> None:
        # ASGIHandler.handle (Django 5.2), with the signals and the close on the loop.
        try:
            body_file = await self.read_body(receive)
        except RequestAborted:
            return
        set_script_prefix(get_script_prefix(scope))
        # No request_started (see the module's docstring); tests check its receivers.
        request, error_response = self.create_request(scope, body_file)
        if request is None:
            assert error_response is not None
            body_file.close()
            await self.send_response(error_response, send)
            error_response.close()
            return

        async def process_request() -> HttpResponseBase:
            response = await self.run_get_response(request)
            try:
                await self.send_response(response, send)
            except asyncio.CancelledError:
                pass  # the client left while it was sent
            return response

        # The disconnect watch first: its task is checked (and cancelled) first.
        watch = asyncio.create_task(watch_disconnect(receive))
        work = asyncio.create_task(process_request())
        tasks: list[asyncio.Task[Any]] = [watch, work]
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in tasks:
                if task.done():
                    # Neither raises RequestAborted: the watch returns when the client
                    # left, and Django's handler turns a view's exceptions into answers.
                    task.result()
                else:
                    task.cancel()  # the view may handle its cancellation
                    try:
                        await task
                    except asyncio.CancelledError:
                        pass
            try:
                response = work.result()
            except asyncio.CancelledError:
                signals.request_finished.send(sender=self.__class__)
            else:
                # Its closers (none for an async iterator) and request_finished.
                response.close()
                let_go_of_context(response)
        finally:
            body_file.close()

    async def send_response(self, response: HttpResponseBase, send: Any) -> None:
        if not isinstance(response, EventStream):
            await super().send_response(response, send)
            return
        await send({"type": "http.response.start", "status": response.status_code,
                    "headers": response_headers(response)})
        async with aclosing(response.events) as events:
            async for part in events:
                if isinstance(part, LastChunk):  # with the end: one message, one write
                    await send({"type": "http.response.body", "body": bytes(part)})
                    return
                if part:
                    await send({"type": "http.response.body", "body": part,
                                "more_body": True})
        await send({"type": "http.response.body"})


class LoopHandler(LoopEdgesHandler):
    """The internal listener's handler: its views run on the loop (OWN_LOOP)."""

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        OWN_LOOP.set(True)  # in this request's context only
        await super().__call__(scope, receive, send)
