"""The public ASGI app sends event streams to Django's ASGI handler, the rest to WSGI."""

from kionga.asgi import wants_stream

SSE = [(b"accept", b"text/event-stream")]


def test_it_streams_only_event_routes_that_ask_for_sse() -> None:
    events = "/api/v1/agent-designs/d/runs/r/events"
    assert wants_stream({"type": "http", "path": events, "headers": SSE})
    assert not wants_stream({"type": "http", "path": events,
                             "headers": [(b"accept", b"application/json")]})
    assert not wants_stream({"type": "http", "path": "/api/v1/me", "headers": SSE})
    assert not wants_stream({"type": "lifespan", "path": events, "headers": SSE})


def test_it_streams_a_run_start_that_asks_for_sse() -> None:
    start = "/api/v1/agent-designs/d/runs"
    assert wants_stream({"type": "http", "method": "POST", "path": start, "headers": SSE})
    assert not wants_stream({"type": "http", "method": "GET", "path": start, "headers": SSE})
    assert not wants_stream({"type": "http", "method": "POST", "path": start,
                             "headers": [(b"accept", b"application/json")]})


def test_it_streams_a_projects_notices_that_ask_for_sse() -> None:
    notices = "/api/v1/projects/1/notices"
    assert wants_stream({"type": "http", "method": "GET", "path": notices, "headers": SSE})
    assert not wants_stream({"type": "http", "method": "GET", "path": notices,
                             "headers": [(b"accept", b"application/json")]})
