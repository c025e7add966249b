"""The internal listener's middleware on a route served on its event loop: every hook
still answers (the security headers, the JSON error), and none of them is a hop to
asgiref's one shared thread (kionga.loop_middleware), which all calls in flight share."""

from __future__ import annotations

import asyncio
import os
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import pytest
from asgiref.sync import SyncToAsync

from kionga import settings_internal

pytestmark = pytest.mark.django_db(transaction=True)


class CountingExecutor(ThreadPoolExecutor):
    """asgiref's shared thread, counting the work sent to it."""

    def __init__(self) -> None:
        super().__init__(max_workers=1)
        self.sent = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        self.sent += 1
        return super().submit(fn, *args, **kwargs)


async def _call(app: Any, path: str) -> tuple[int, dict[str, str], bytes]:
    scope = {"type": "http", "method": "POST", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "scheme": "http",
             "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1),
             "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                         (b"content-length", b"2")]}
    messages = [{"type": "http.request", "body": b"{}", "more_body": False}]
    answer: dict[str, Any] = {"body": b""}

    async def receive() -> dict[str, Any]:
        if messages:
            return messages.pop()
        await asyncio.Event().wait()  # the client stays: no disconnect
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer["status"] = message["status"]
            answer["headers"] = {k.decode().lower(): v.decode() for k, v in message["headers"]}
        else:
            answer["body"] += message.get("body", b"")

    await app(scope, receive, send)
    return answer["status"], answer["headers"], answer["body"]


def test_a_loop_routes_middleware_runs_on_the_loop(settings: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    settings.ROOT_URLCONF = "kionga.internal_urls"
    settings.MIDDLEWARE = settings_internal.MIDDLEWARE
    # Importing the listener's entry point sets DJANGO_SETTINGS_MODULE to the internal
    # settings for its process: restored after the test, or every later subprocess of
    # this session (manage.py migrate, run_events) would start as the internal listener.
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", os.environ["DJANGO_SETTINGS_MODULE"])
    from kionga.internal_asgi import LoopHandler, on_loop

    path = "/api/v1/models/gpt/predict"
    assert on_loop({"type": "http", "path": path})
    counting = CountingExecutor()
    monkeypatch.setattr(SyncToAsync, "single_thread_executor", counting)
    status, headers, body = asyncio.run(_call(LoopHandler(), path))
    # No credential: the JSON error, with every middleware's headers.
    assert status == 401 and b'"invalid_credential"' in body
    assert headers["x-frame-options"] == "DENY"
    assert headers["x-content-type-options"] == "nosniff"
    assert "referrer-policy" in headers and "content-security-policy" in headers
    # Django's own: rendering the answer. Each middleware hook was one more (11 in
    # all); request_started's receivers and closing the answer two more
    # (kionga.loop_handler sends the signals on the loop).
    assert counting.sent <= 1
