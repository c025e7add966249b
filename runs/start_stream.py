"""Start a run and follow it in one request: `POST …/runs` with `Accept: text/event-stream`.

The start is the ordinary one (the runs view's checks, quota and idempotency); the
answer is the run's event stream instead of its JSON: the first frame, `event: run`
(no id, so it never moves a Last-Event-ID), carries the run as the 201 answer would,
with `url` and `events_url`; headers carry them too (Location, X-Run-Id). The stream
is then the one of `GET …/runs/{id}/events` (reconnect there with Last-Event-ID).
The caller's place in the stream budget is taken before the run starts, so a run is
never started for a stream the gateway would refuse.
"""

from __future__ import annotations

import json
import uuid
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterable
from typing import Any

from django.contrib.auth.models import User
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

from kionga.loop_handler import EventStream
from kionga.stream_end import LastChunk
from runs.models import Run
from runs.sse import Opening, opening, run_event_stream
from runs.stream_access import Check, rechecked
from runs.stream_limits import BUDGET, counted

EVENT_STREAM = "text/event-stream"


def wants_stream(request: Request) -> bool:
    return EVENT_STREAM in request.headers.get("Accept", "")


class JsonOrStream(DefaultContentNegotiation):
    """The runs route also answers `Accept: text/event-stream` (its stream is not a
    DRF rendering): errors and the JSON answers still render as JSON then."""

    def select_renderer(self, request: Request, renderers: Iterable[BaseRenderer],
                        format_suffix: str | None = None) -> tuple[Any, str]:
        if wants_stream(request):
            renderer = next(iter(renderers))
            return renderer, str(renderer.media_type)
        selected: tuple[Any, str] = super().select_renderer(request, renderers, format_suffix)
        return selected


def negotiates_streams(view: Callable[..., Any]) -> Callable[..., Any]:
    """Below @api_view: the route's content negotiation (JsonOrStream)."""
    view.content_negotiation_class = JsonOrStream  # type: ignore[attr-defined]
    return view


def start_and_stream(user: User, start: Callable[[], tuple[Run, bool]], path: str,
                     check_of: Callable[[uuid.UUID], Check]) -> EventStream:
    """Take the caller's stream place, start the run (`start` as runs.views does),
    answer its stream; the place is given back if the start fails. `check_of(run ID)`:
    the access re-check of the run's event stream (runs.stream_access), which this is."""
    release = BUDGET.open(user.pk)  # 429/503 before anything starts
    try:
        run, replayed = start()
        # A fresh run has stored nothing yet; a replayed one may have.
        first: Opening = opening(run, -1) if replayed else (False, [])
    except BaseException:
        release()
        raise
    url = f"{path.rstrip('/')}/{run.pk}"
    head = {**run.to_dict(), "url": url, "events_url": f"{url}/events"}
    events = with_head(head, run_event_stream(str(run.pk), -1, first))
    response = event_stream(counted(rechecked(events, check_of(run.pk)), release),
                            status=200 if replayed else 201)
    weakref.finalize(response, release)  # a response never sent never runs its stream
    response["Location"] = url
    response["X-Run-Id"] = str(run.pk)
    return response


def event_stream(chunks: AsyncGenerator[bytes, None], status: int = 200) -> EventStream:
    """The answer of an event stream (or, with no chunks, its HEAD): unbuffered, each
    chunk written as it comes, a LastChunk with the answer's end (kionga.loop_handler)."""
    return EventStream(chunks, status=status,
                       headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


async def with_head(head: dict[str, Any],
                    stream: AsyncIterator[bytes]) -> AsyncGenerator[bytes, None]:
    """`event: run` (the run, its URL and events URL; no id), then the run's stream; the
    head goes out with the stream's first chunk (runs.sse yields its opening at once)."""
    data = json.dumps(head, ensure_ascii=False, separators=(",", ":"))
    first = f"event: run\ndata: {data}\n\n".encode()
    async for chunk in stream:
        joined = first + chunk
        yield LastChunk(joined) if isinstance(chunk, LastChunk) else joined
        first = b""
