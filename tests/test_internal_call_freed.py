"""A resource call served on the internal listener's loop is freed by reference counts as
it ends: neither its request, its view nor its answer is left in a reference cycle.
A call lives for seconds (an upstream's stream), so its objects age out of the young
generations; left in cycles, they would wait for a full collection, which the listener
spaces out (runner/heap.py), and every full collection would walk them."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga import settings_internal
from kionga.models import Project
from kionga.resource_models import ModelEndpoint
from tests.cyclic_garbage import cyclic_garbage
from tests.internal_helpers import start_run
from tests.keepalive_peer import KeepAlivePeer

# Committed data: the view's database reads happen in kionga.pooled's threads.
pytestmark = pytest.mark.django_db(transaction=True)

CALL_OBJECTS = {"ASGIRequest", "Request", "EventStream", "RequestAborted", "Response",
                "HttpResponse", "StorableJSONParser", "RunCredentialAuthentication"}


async def call(app: Any, credential: str, body: dict[str, Any], accept: str) -> bytes:
    """One POST to the model route as uvicorn drives an app: the body, then, once the
    answer is complete, http.disconnect (what Django's handler used to raise on)."""
    raw = json.dumps(body).encode()
    path = "/api/v1/models/gpt/predict"
    scope = {"type": "http", "method": "POST", "path": path, "raw_path": path.encode(),
             "query_string": b"", "root_path": "", "scheme": "http", "http_version": "1.1",
             "server": ("127.0.0.1", 80), "client": ("127.0.0.1", 1),
             "headers": [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"),
                         (b"accept", accept.encode()),
                         (b"authorization", f"Bearer {credential}".encode()),
                         (b"content-length", str(len(raw)).encode())]}
    complete = asyncio.Event()
    requests = [{"type": "http.request", "body": raw, "more_body": False}]
    parts: list[bytes] = []

    async def receive() -> dict[str, Any]:
        if requests:
            return requests.pop()
        await complete.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.body":
            parts.append(message.get("body", b""))
            if not message.get("more_body"):
                complete.set()

    await app(scope, receive, send)
    return b"".join(parts)


@pytest.mark.parametrize("accept", ["text/event-stream, application/json", "application/json"])
def test_a_finished_call_is_in_no_reference_cycle(settings: Any, monkeypatch: pytest.MonkeyPatch,
                                                  carol: User, acme: Project, accept: str) -> None:
    settings.ROOT_URLCONF = "kionga.internal_urls"
    settings.MIDDLEWARE = settings_internal.MIDDLEWARE
    # Importing the listener's entry point sets DJANGO_SETTINGS_MODULE for its process.
    monkeypatch.setenv("DJANGO_SETTINGS_MODULE", os.environ["DJANGO_SETTINGS_MODULE"])
    from kionga.internal_asgi import LoopHandler

    with KeepAlivePeer().serving() as peer:
        ModelEndpoint.objects.create(project=acme, key="gpt", base_url=peer.url,
                                     model_name="m", secret="sk-0123456789abcdef")
        credential = start_run(carol, acme)[1]
        body = {"messages": [{"role": "user", "content": "hi"}]}
        app = LoopHandler()

        async def calls() -> list[bytes]:
            # The first call warms what lives as long as the process (connections).
            return [await call(app, credential, body, accept) for _ in range(3)]

        with cyclic_garbage() as left:
            answers = asyncio.run(calls())
    assert all(b"hi" in answer or b'"h"' in answer for answer in answers), answers
    assert not CALL_OBJECTS & set(left), sorted(CALL_OBJECTS & set(left))
