"""Runs API: start, list, read, follow (JSON pages or SSE) and cancel runs of a design."""

from __future__ import annotations

import uuid
import weakref
from collections.abc import AsyncGenerator
from dataclasses import replace
from functools import partial

from django.contrib.auth.models import User
from django.http import HttpRequest, HttpResponseBase
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import api_view, throttle_classes
from rest_framework.exceptions import APIException
from rest_framework.request import Request
from rest_framework.response import Response

from designs.actions import check_design_access
from kionga import api_request
from kionga.auth import fresh_session_request
from kionga.errors import api_error_response, invalid_field
from kionga.models import Role
from kionga.openapi import ERRORS, ok
from kionga.pooled import pooled
from kionga.request_body import parse
from runs import admission, idempotency, node_records, read, start_read, start_stream, stream_open
from runs import openapi as doc
from runs.cancel import do_cancel_run
from runs.models import Run
from runs.serializers import StartRunSerializer
from runs.sse import Opening, run_event_stream
from runs.start import StartRequest, start_target
from runs.stream_access import rechecked
from runs.stream_limits import BUDGET, counted

IDEMPOTENCY = OpenApiParameter("Idempotency-Key", str, OpenApiParameter.HEADER, required=False)
AFTER = OpenApiParameter("after", int, required=False, description="Events after this seq.")


@extend_schema(methods=["GET"], responses={200: ok(doc.RUN_LIST), **ERRORS},
               operation_id="list_runs")
@extend_schema(methods=["POST"], request=StartRunSerializer, parameters=[IDEMPOTENCY],
               responses={201: ok(doc.RUN), 200: ok(doc.RUN), **ERRORS},
               operation_id="start_run",
               description="With `Accept: text/event-stream` the answer is the run's event "
                           "stream: `event: run` (the run, `url`, `events_url`) first, then "
                           "its events to the end, as `.../events` serves them.")
@api_view(["GET", "POST"])
@throttle_classes([admission.AtAdmission])
@start_stream.negotiates_streams
def runs(request: Request, design_id: uuid.UUID) -> Response | HttpResponseBase:
    if request.method == "GET":
        design = check_design_access(request.user, design_id)
        return Response({"runs": read.runs_of(design)})
    assert isinstance(request.user, User)
    user = request.user
    try:
        return _start(request, user, design_id)
    except APIException:
        admission.settle(request)  # DRF's throttles answer first, as on any route
        raise


def _start(request: Request, user: User, design_id: uuid.UUID) -> Response | HttpResponseBase:
    # The body first for the one read (start_read), its refusal after the access check.
    try:
        parsed = StartRequest.of(parse(StartRunSerializer, request.data))
        start: StartRequest | None = replace(parsed,
                                             traceparent=request.headers.get("traceparent"))
        invalid: APIException | None = None
    except APIException as exc:
        start, invalid = None, exc
    found = start_read.read_start(user, design_id, start.revision if start else None)
    design = found.check_design()
    if invalid is not None:
        raise invalid
    assert start is not None
    key = idempotency.check_key(request.headers.get("Idempotency-Key"))
    counting = admission.counting(request)

    def start_once() -> tuple[Run, bool]:
        run, replayed = idempotency.start_once(
            design.project, user, key, start.fingerprint(),
            lambda: start_target(user, found.check_target(design), start, counting))
        admission.settle(request)  # a replay took no slot: its throttles count alone
        return run, replayed

    if start_stream.wants_stream(request):  # start and follow in one request
        http = request._request
        return start_stream.start_and_stream(
            user, start_once, request.path,
            lambda run_id: partial(pooled(_recheck), http, design_id, run_id))
    run, replayed = start_once()
    return Response(run.to_dict(), status=200 if replayed else 201)


@extend_schema(responses={200: ok(doc.RUN_WITH_EVENTS), **ERRORS}, operation_id="get_run")
@api_view(["GET"])
def run(request: Request, design_id: uuid.UUID, run_id: uuid.UUID) -> Response:
    return Response(read.check_run_with_events(request.user, design_id, run_id))


@extend_schema(responses={200: ok(doc.NODE_LIST), **ERRORS}, operation_id="list_run_nodes")
@api_view(["GET"])
def nodes(request: Request, design_id: uuid.UUID, run_id: uuid.UUID) -> Response:
    return Response(node_records.check_run_nodes(request.user, design_id, run_id))


@extend_schema(responses={200: ok(doc.NODE_ATTEMPTS), **ERRORS}, operation_id="get_run_node")
@api_view(["GET"])
def node(request: Request, design_id: uuid.UUID, run_id: uuid.UUID, node_id: str) -> Response:
    return Response(node_records.check_run_node(request.user, design_id, run_id, node_id))


@extend_schema(request=None, responses={202: ok(doc.RUN), **ERRORS}, operation_id="cancel_run")
@api_view(["POST"])
def cancel(request: Request, design_id: uuid.UUID, run_id: uuid.UUID) -> Response:
    found = read.check_run_access(request.user, design_id, run_id, Role.EDITOR)
    assert isinstance(request.user, User)
    return Response(do_cancel_run(request.user, found).to_dict(), status=202)


@extend_schema(parameters=[AFTER, OpenApiParameter("limit", int, required=False)],
               responses={200: ok(doc.EVENTS_PAGE), **ERRORS}, operation_id="run_events")
@api_view(["GET"])
def events_page(request: Request, design_id: uuid.UUID, run_id: uuid.UUID) -> Response:
    after = read.parse_after(request.query_params.get("after"))
    limit = _limit(request.query_params.get("limit"))
    return Response(read.check_events_page(request.user, design_id, run_id, after, limit))


def events(request: HttpRequest, design_id: uuid.UUID, run_id: uuid.UUID) -> HttpResponseBase:
    """JSON pages through DRF; `Accept: text/event-stream` streams without holding a thread
    (kionga.stream_handler: the opening's database work is in the request's one thread
    hop), after the API's own authentication, permissions and throttles
    (kionga.api_request). A HEAD of the stream answers its headers (or its refusal) and
    takes no place."""
    # Other methods get DRF's answer (405, or 406 for this Accept), as on any route.
    streamed = request.method in ("GET", "HEAD")
    if not streamed or "text/event-stream" not in request.headers.get("Accept", ""):
        return events_page(request, design_id, run_id)
    try:
        last = read.parse_after(request.headers.get("Last-Event-ID")
                                or request.GET.get("after"), strict=False)
        user_id, found, start = _open_stream(request, design_id, run_id, last)
        if request.method == "HEAD":
            BUDGET.check(user_id)  # the refusal an open would get now
            return start_stream.event_stream(_nothing())
        # After the access check: only people who may read the run take a place.
        release = BUDGET.open(user_id)
    except APIException as exc:
        return api_error_response(exc)
    check = partial(pooled(_recheck), request, design_id, run_id)
    response = start_stream.event_stream(
        counted(rechecked(run_event_stream(found, last, start), check), release))
    # A response never sent (the client left first) never runs its stream: give the
    # place back when it goes away.
    weakref.finalize(response, release)
    return response


async def _nothing() -> AsyncGenerator[bytes, None]:
    return
    yield  # an empty async generator: a HEAD's body


# The schema generator documents `events` through its JSON twin.
events.cls = events_page.cls  # type: ignore[attr-defined]
events.initkwargs = events_page.initkwargs  # type: ignore[attr-defined]


def _open_stream(request: HttpRequest, design_id: uuid.UUID, run_id: uuid.UUID,
                 last: int | None) -> tuple[int, str, Opening]:
    """(user ID, run ID, opening): the API's authentication and throttles, the access
    check and the stored events, in one thread hop and one pooled connection."""
    user = api_request.authenticate(request)
    found, start = stream_open.open_run(user, design_id, run_id, last)
    return user.pk, found, start


def _recheck(request: HttpRequest, design_id: uuid.UUID, run_id: uuid.UUID) -> None:
    """An open stream's re-check (runs.stream_access): the same authentication, on a
    fresh read of the session (a sign-out, a changed password, a deactivated person end
    it), and the access alone; nothing counted."""
    user = api_request.authenticate(fresh_session_request(request), count=False)
    stream_open.open_run(user, design_id, run_id, stream_open.RECHECK)


def _limit(raw: str | None) -> int:
    if raw in (None, ""):
        return read.PAGE_SIZE
    try:
        return min(max(int(str(raw)), 1), 1000)
    except ValueError:
        raise invalid_field("limit", "A valid integer is required.") from None
