"""A tiny real HTTP server on loopback for the engine's HTTP tests (stdlib only)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.loopback import serving

# handler(method, path, headers, body) -> (status, headers, chunks)
Route = Callable[[str, str, dict[str, str], Any], tuple[int, dict[str, str], Iterator[bytes]]]


@contextmanager
def serve(route: Route) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Serve `route` on 127.0.0.1; yields (base URL, recorded requests)."""
    seen: list[dict[str, Any]] = []
    disconnected: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else None
            headers = {k.lower(): v for k, v in self.headers.items()}
            seen.append({"method": self.command, "path": self.path, "headers": headers,
                         "body": body})
            status, out_headers, chunks = route(self.command, self.path, headers, body)
            self.send_response(status)
            for key, value in out_headers.items():
                self.send_header(key, value)
            self.end_headers()
            try:
                for chunk in chunks:
                    self.wfile.write(chunk)
                    self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                disconnected.append(self.path)  # the client hung up (e.g. cancelled)

        do_GET = do_POST = _handle

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep the test output clean

    with serving(Handler) as url:
        yield url, seen


def json_answer(status: int, body: Any) -> tuple[int, dict[str, str], Iterator[bytes]]:
    return status, {"Content-Type": "application/json"}, iter([json.dumps(body).encode()])
