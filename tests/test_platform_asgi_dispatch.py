"""The public ASGI app (Channels' router, kionga.asgi) sends event streams to Django's
ASGI handler, the rest to Django's WSGI handler: by path, method and Accept."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from kionga import asgi

SSE = [(b"accept", b"text/event-stream")]
JSON = [(b"accept", b"application/json")]
EVENTS = "/api/v1/agent-designs/0c7e1c8e-3b7a-4a36-9d3c-3a3c1c0d2b11/runs/" \
         "6b0f3c9e-0a8e-4f7b-9c55-0f6c2b6f1d22/events"
START = "/api/v1/agent-designs/0c7e1c8e-3b7a-4a36-9d3c-3a3c1c0d2b11/runs"


def handler_of(monkeypatch: pytest.MonkeyPatch, method: str, path: str,
               headers: list[tuple[bytes, bytes]]) -> str:
    taken: list[str] = []

    def named(name: str) -> Any:
        async def app(scope: Any, receive: Any, send: Any) -> None:
            taken.append(f"{name} {scope['method']}")
        return app

    monkeypatch.setattr(asgi, "streams", named("streams"))
    monkeypatch.setattr(asgi, "notices", named("notices"))
    monkeypatch.setattr(asgi, "requests", named("requests"))
    scope = {"type": "http", "method": method, "path": path, "headers": headers}
    asyncio.run(asgi.router(scope, None, None))
    [name] = taken
    return name


def test_it_streams_only_event_routes_that_ask_for_sse(monkeypatch: pytest.MonkeyPatch) -> None:
    assert handler_of(monkeypatch, "GET", EVENTS, SSE) == "streams GET"
    assert handler_of(monkeypatch, "HEAD", EVENTS, SSE) == "streams HEAD"  # the view's own
    assert handler_of(monkeypatch, "GET", EVENTS, JSON) == "requests GET"
    assert handler_of(monkeypatch, "POST", EVENTS, SSE) == "requests POST"
    assert handler_of(monkeypatch, "GET", "/api/v1/me", SSE) == "requests GET"
    assert handler_of(monkeypatch, "GET", EVENTS.replace("0c7e", "XXXX"), SSE) == \
        "requests GET"


def test_a_head_is_the_routes_get(monkeypatch: pytest.MonkeyPatch) -> None:
    assert handler_of(monkeypatch, "HEAD", "/api/v1/me", JSON) == "requests GET"
    assert handler_of(monkeypatch, "HEAD", EVENTS, JSON) == "requests GET"


def test_it_streams_a_run_start_that_asks_for_sse(monkeypatch: pytest.MonkeyPatch) -> None:
    assert handler_of(monkeypatch, "POST", START, SSE) == "streams POST"
    assert handler_of(monkeypatch, "GET", START, SSE) == "requests GET"
    assert handler_of(monkeypatch, "POST", START, JSON) == "requests POST"
    assert handler_of(monkeypatch, "POST", START + "/", SSE) == "requests POST"


def test_it_streams_a_projects_notices_that_ask_for_sse(
        monkeypatch: pytest.MonkeyPatch) -> None:
    notices = "/api/v1/projects/1/notices"
    assert handler_of(monkeypatch, "GET", notices, SSE) == "notices GET"
    assert handler_of(monkeypatch, "GET", notices, JSON) == "requests GET"
    assert handler_of(monkeypatch, "POST", notices, SSE) == "requests POST"
