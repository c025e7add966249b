"""A project's notices as Server-Sent Events: `GET /api/v1/projects/{id}/notices`.

DRF authenticates (a session or a bearer token), counts the throttles and checks the
project as on every route (404 for a project that is not the caller's); then
django-eventstream serves the project's channel (kionga.notices). kionga/asgi.py sends
this route to Django's ASGI handler, so an open stream holds no worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponseBase, QueryDict, StreamingHttpResponse
from django_eventstream.views import events
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework.decorators import api_view
from rest_framework.exceptions import APIException, NotAcceptable, NotAuthenticated
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

from kionga.access import check_project_access
from kionga.auth import fresh_session_user, invalid_token
from kionga.errors import describe
from kionga.notices import channel_of, install_resilient_listener
from kionga.openapi import ERRORS
from kionga.tokens import find_user_by_token

EVENT_STREAM = "text/event-stream"
install_resilient_listener()


class StreamOnly(DefaultContentNegotiation):
    """The stream is not a DRF rendering: refusals render as JSON whatever the Accept."""

    def select_renderer(self, request: Request, renderers: Iterable[BaseRenderer],
                        format_suffix: str | None = None) -> tuple[Any, str]:
        renderer = next(iter(renderers))
        return renderer, str(renderer.media_type)


def stream_only(view: Callable[..., Any]) -> Callable[..., Any]:
    """Below @api_view: the route's content negotiation (StreamOnly)."""
    view.content_negotiation_class = StreamOnly  # type: ignore[attr-defined]
    return view


@extend_schema(
    operation_id="project_notices",
    responses={(200, EVENT_STREAM): OpenApiResponse(
        OpenApiTypes.STR, description=(
            "Server-Sent Events. Each `message` event's data is a notice: JSON with "
            "`kind` (approval.requested, approval.decided, approval.expired, "
            "approval.cancelled, run.started, run.ended, revision.saved) and the IDs of "
            "what changed. A notice only says what to read again; `keep-alive` events "
            "come every 20 s. Notices are not stored: after a reconnect, read again."),
        examples=[OpenApiExample("notice", value='event: message\ndata: {"kind": '
                                 '"run.ended", "run_id": "…", "design_id": "…"}\n\n')]),
        **ERRORS},
    description="Needs `Accept: text/event-stream` (406 otherwise).")
@api_view(["GET"])
@stream_only
def notices(request: Request, project_id: int) -> HttpResponseBase:
    project = check_project_access(request.user, project_id)
    if EVENT_STREAM not in request.headers.get("Accept", ""):
        raise NotAcceptable(f"This route answers {EVENT_STREAM} only.")
    django_request = request._request
    # django-eventstream reads its options from the query and Last-Event-ID; this route
    # takes none of them (its channel is the path's project; notices are not stored).
    django_request.GET = QueryDict()
    django_request.META.pop("HTTP_LAST_EVENT_ID", None)
    response = events(django_request, channel=channel_of(project.pk))
    content = getattr(response, "streaming_content", None)
    if isinstance(response, StreamingHttpResponse) and isinstance(content, AsyncIterator):
        response.streaming_content = rechecked(content, access_check(django_request, project.pk))
    # The stream may last hours: its database connection goes back now, not at its end.
    if not connection.in_atomic_block:
        connection.close()
    return response


def access_check(request: HttpRequest, project_id: int) -> Callable[[], None]:
    """The stream's re-check: the caller's credential read again (a token revoked or
    expired, a session signed out) and the project's access checks; raises the
    APIException an opening would answer now."""
    header = request.headers.get("Authorization", "")
    bearer = header[7:].strip() if header.lower().startswith("bearer ") else None

    def check() -> None:
        try:
            user = fresh_session_user(request) if bearer is None else find_user_by_token(bearer)
            if user is None:
                raise invalid_token("The token is unknown or revoked.")
            if not user.is_authenticated:
                raise NotAuthenticated()
            check_project_access(user, project_id)
        finally:
            connection.close()  # a thread of the default pool: give the connection back

    return check


async def rechecked(chunks: AsyncIterable[Any], check: Callable[[], None]) -> AsyncIterator[Any]:
    """The stream, ended by a closing comment (`: closed <code>: <message>`, as run event
    streams end) once `check` refuses. Checked before passing a chunk on, at most every
    KIONGA_STREAM_RECHECK_SECONDS: no notice reaches someone who lost access, and a
    keep-alive comes every 20 s. A check the database cannot answer keeps the stream."""
    loop = asyncio.get_running_loop()
    every = float(settings.KIONGA_STREAM_RECHECK_SECONDS)
    due = loop.time() + every
    try:
        async for chunk in chunks:
            if loop.time() >= due:
                try:
                    await sync_to_async(check, thread_sensitive=False)()
                except APIException as exc:
                    code, message, _details = describe(exc)
                    yield f": closed {code}: {message}\n\n"
                    return
                except DatabaseError:
                    pass  # an outage ends no stream; asked again next time
                due = loop.time() + every
            yield chunk
    finally:
        # django-eventstream's stream leaves its listeners when closed.
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()
