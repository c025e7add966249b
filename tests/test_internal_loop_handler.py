"""kionga.loop_handler: an EventStream's events go out one body message each as they
come, its iterator is closed however the answer ends, and the signals Django would
send from a thread are left out only while their receivers have nothing to do on the
loop."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import AsyncToSync

from kionga.loop_handler import LOOP_SAFE_RECEIVERS, OWN_LOOP, EventStream, LoopHandler
from kionga.stream_end import LastChunk
from runs.loop_view import in_thread

ROOT = Path(__file__).resolve().parent.parent


class Events:
    def __init__(self, parts: list[bytes]) -> None:
        self.parts, self.closed = parts, False

    async def stream(self) -> AsyncGenerator[bytes, None]:
        try:
            for part in self.parts:
                await asyncio.sleep(0)
                yield part
        finally:
            self.closed = True


def test_an_event_stream_is_written_event_by_event() -> None:
    events = Events([b"event: delta\ndata: {}\n\n", b"", b"event: done\ndata: {}\n\n"])
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    response = EventStream(events.stream(), headers={"Cache-Control": "no-cache"})
    asyncio.run(LoopHandler.send_response(LoopHandler.__new__(LoopHandler), response, send))
    start, *bodies, end = sent
    assert start["status"] == 200
    assert (b"Content-Type", b"text/event-stream") in start["headers"]
    assert (b"Cache-Control", b"no-cache") in start["headers"]
    # The empty part is not a message of its own; the end is the empty final message.
    assert [(m["body"], m["more_body"]) for m in bodies] == [(events.parts[0], True),
                                                             (events.parts[2], True)]
    assert end == {"type": "http.response.body"}
    assert events.closed


def test_a_last_chunk_goes_with_the_end_of_the_answer() -> None:
    events = Events([b"event: delta\ndata: {}\n\n", LastChunk(b"event: done\ndata: {}\n\n"),
                     b"never sent"])
    sent: list[dict[str, Any]] = []

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    asyncio.run(LoopHandler.send_response(LoopHandler.__new__(LoopHandler),
                                          EventStream(events.stream()), send))
    assert [(m["body"], m.get("more_body", False)) for m in sent[1:]] == [
        (events.parts[0], True), (b"event: done\ndata: {}\n\n", False)]
    assert type(sent[-1]["body"]) is bytes
    assert events.closed


def test_an_event_stream_whose_client_left_is_closed() -> None:
    events = Events([b"event: delta\ndata: {}\n\n"] * 5)

    async def send(message: dict[str, Any]) -> None:
        if message.get("more_body"):
            raise OSError("the client left")

    response = EventStream(events.stream())
    with pytest.raises(OSError):
        asyncio.run(LoopHandler.send_response(LoopHandler.__new__(LoopHandler), response,
                                              send))
    assert events.closed


def test_the_signals_left_out_have_only_receivers_that_need_no_thread() -> None:
    """In the listener's own process (its settings, its URLconf and views imported)."""
    code = ("import json, weakref\n"
            "import kionga.internal_asgi\n"
            "from django.urls import get_resolver\n"
            "from django.core import signals\n"
            "get_resolver().url_patterns\n"
            "found = []\n"
            "for signal in (signals.request_started, signals.request_finished):\n"
            "    for _key, fn, *_ in signal.receivers:\n"
            "        fn = fn() if isinstance(fn, weakref.ReferenceType) else fn\n"
            "        found.append(f'{fn.__module__}.{fn.__qualname__}')\n"
            "print(json.dumps(found))\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True,
                         capture_output=True, text=True,
                         env={**os.environ, "DJANGO_SETTINGS_MODULE": "kionga.settings"})
    receivers = set(json.loads(out.stdout.strip().splitlines()[-1]))
    assert "django.db.close_old_connections" in receivers  # the check sees them
    assert receivers <= LOOP_SAFE_RECEIVERS, receivers - LOOP_SAFE_RECEIVERS


def test_in_thread_on_the_listeners_loop_does_not_ask_asgiref(
        monkeypatch: pytest.MonkeyPatch) -> None:
    class Refusing:
        def __getattr__(self, name: str) -> Any:
            raise AssertionError("asked asgiref")

    monkeypatch.setattr(AsyncToSync, "executors", Refusing())

    async def go() -> int:
        OWN_LOOP.set(True)
        return await in_thread(lambda: 7)()

    assert asyncio.run(go()) == 7
