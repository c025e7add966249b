"""A project's notices as Server-Sent Events: `GET /api/v1/projects/{id}/notices`.

DRF authenticates (a session or a bearer token), counts the throttles and checks the
project as on every route (404 for a project that is not the caller's); then
django-eventstream serves the project's channel (kionga.notices). kionga/asgi.py sends
this route to Django's ASGI handler, so an open stream holds no worker thread.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.db import connection
from django.http import HttpResponseBase, QueryDict
from django_eventstream.views import events
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework.decorators import api_view
from rest_framework.exceptions import NotAcceptable
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

from kionga.access import check_project_access
from kionga.notices import channel_of, install_resilient_listener
from kionga.openapi import ERRORS

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
    response: HttpResponseBase = events(django_request, channel=channel_of(project.pk))
    # The stream may last hours: its database connection goes back now, not at its end.
    if not connection.in_atomic_block:
        connection.close()
    return response
