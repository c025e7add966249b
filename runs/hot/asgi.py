"""The runs app's hot routes as plain ASGI (registered in kionga.hot_routes).

Eligible requests carry one `Authorization: Bearer kio_…` header, no Cookie and no
Idempotency-Key, and (to start a run) a JSON body of the usual fields with the usual
types. Anything else goes to Django before anything is done, so the DRF path answers
it (and its errors) as always. Eligible ones are served with one thread hop
(runs.pooled) for the database and Redis work (start.py / runs.stream_open), then the
answer: JSON, or the run's event stream from runs.sse as the events view streams it.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import replace
from typing import Final
from urllib.parse import parse_qs

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.urls.converters import UUIDConverter
from rest_framework import exceptions as drf

from kionga import hot_http
from kionga.auth import BEARER_CHALLENGE
from kionga.hot_routes import App, Handler, Receive, Scope, Send
from kionga.http_limits import replay
from kionga.tokens import TOKEN_PREFIX
from runs import read, stream_open
from runs.hot import body as start_body
from runs.hot.start import start_with_token
from runs.pooled import pooled
from runs.sse import run_event_stream
from runs.start_stream import with_head
from runs.stream_access import rechecked, token_check
from runs.stream_limits import BUDGET, counted

_UUID: Final = UUIDConverter.regex
_RUNS: Final = re.compile(rf"/api/v1/agent-designs/({_UUID})/runs")
_EVENTS: Final = re.compile(rf"/api/v1/agent-designs/({_UUID})/runs/({_UUID})/events")


def match(scope: Scope) -> Handler | None:
    """A handler for an eligible runs request, None for everything else."""
    if _token(scope) is None or _has(scope, b"cookie"):
        return None
    method, path = scope.get("method"), scope.get("path", "")
    if method == "POST" and _RUNS.fullmatch(path) and not _has(scope, b"idempotency-key"):
        return start_run
    if method == "GET" and _EVENTS.fullmatch(path) and _wants_stream(scope):
        return follow_run
    return None


async def start_run(scope: Scope, receive: Receive, send: Send, django: App) -> None:
    content_type = hot_http.header(scope, b"content-type") or ""
    raw = await hot_http.read_body(receive)
    if raw is None:
        return  # the client went away
    request = start_body.parse(raw) if content_type.startswith("application/json") else None
    if request is None or not _host_allowed(scope):
        await django(scope, replay(raw, receive), send)  # Django's answer, errors included
        return
    found = _RUNS.fullmatch(scope["path"])
    assert found is not None
    design_id, token = uuid.UUID(found[1]), _token(scope)
    assert token is not None  # match() took only bearer requests
    streaming = _wants_stream(scope)
    request = replace(request, traceparent=hot_http.header(scope, b"traceparent"))
    try:
        run, release = await pooled(start_with_token)(token, design_id, request, streaming)
    except drf.APIException as exc:
        if exc.status_code == 401:  # as DRF's APIView.handle_exception adds it
            exc.auth_header = BEARER_CHALLENGE  # type: ignore[attr-defined]
        await hot_http.answer_error(send, exc)
        return
    url = f"{scope['path']}/{run.pk}"
    if not streaming:
        await hot_http.answer_json(send, 201, run.to_dict(),
                                   [(b"allow", b"GET, POST, OPTIONS")])
        return
    assert release is not None
    head = {**run.to_dict(), "url": url, "events_url": f"{url}/events"}
    events = with_head(head, run_event_stream(str(run.pk), -1, (False, [])))
    # Followed as the run's event stream, so re-checked as one (runs.stream_access).
    stream = counted(rechecked(events, token_check(token, design_id, run.pk)), release)
    try:
        await hot_http.answer_stream(send, receive, 201, stream, [
            (b"location", url.encode()), (b"x-run-id", str(run.pk).encode())])
    finally:
        release()  # also when the stream never started (the client left first)


async def follow_run(scope: Scope, receive: Receive, send: Send, django: App) -> None:
    if not _host_allowed(scope):
        await django(scope, receive, send)
        return
    found = _EVENTS.fullmatch(scope["path"])
    assert found is not None
    design_id, run_id = uuid.UUID(found[1]), uuid.UUID(found[2])
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    last = read.parse_after(hot_http.header(scope, b"last-event-id")
                            or (query.get("after") or [None])[0], strict=False)
    token = _token(scope)
    assert token is not None  # match() took only bearer requests
    try:
        user_id, run, opening = await pooled(stream_open.open_with_token)(token, design_id,
                                                                          run_id, last)
        # After the access check: only people who may read the run take a place.
        release = BUDGET.open(user_id)
    except drf.APIException as exc:
        await hot_http.answer_error(send, exc)
        return
    events = rechecked(run_event_stream(run, last, opening),
                       token_check(token, design_id, run_id))
    try:
        await hot_http.answer_stream(send, receive, 200, counted(events, release))
    finally:
        release()  # also when the stream never started (the client left first)


def _token(scope: Scope) -> str | None:
    """The API token of `Authorization: Bearer kio_…`, or None for any other header."""
    value = hot_http.header(scope, b"authorization") or ""
    token = value[7:].strip()
    return token if value[:7].lower() == "bearer " and token.startswith(TOKEN_PREFIX) else None


def _has(scope: Scope, name: bytes) -> bool:
    return any(k.lower() == name for k, _v in scope.get("headers", ()))


def _wants_stream(scope: Scope) -> bool:
    return "text/event-stream" in (hot_http.header(scope, b"accept") or "")


def _host_allowed(scope: Scope) -> bool:
    """Django's ALLOWED_HOSTS check (CommonMiddleware's get_host): a bad Host goes to
    Django, which refuses it as always."""
    host = hot_http.header(scope, b"host")
    if host is None or settings.USE_X_FORWARDED_HOST:
        return False
    domain, _port = split_domain_port(host)
    return bool(domain) and validate_host(domain, settings.ALLOWED_HOSTS)
