"""The runner's small HTTP endpoint: GET /health and GET /capacity, bearer token only.

Stdlib only (no new dependency, nothing else listening in the locked-down
container). It runs in a daemon thread of the worker's main process. /capacity
counts the slots the gateway holds in Redis, i.e. across every runner process and
host (a slot freed within the last second may still count: the gateway prunes them).
"""

from __future__ import annotations

import hmac
import json
import logging
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import redis

from runner import protocol

log = logging.getLogger(__name__)


class HealthServer:
    def __init__(self, host: str, port: int, token: str, max_runs: int,
                 client: Callable[[], redis.Redis]) -> None:
        """Binds at once, so a taken port stops the start instead of going unnoticed."""
        self.token = token
        self.max_runs = max_runs
        self.client = client
        self._httpd = ThreadingHTTPServer((host, port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever,
                                            name="runner-health", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread = None
        self._httpd.server_close()

    def close_inherited(self) -> None:
        """In a forked pool child: drop the copy of the listening socket."""
        self._httpd.socket.close()

    def authorized(self, header: str | None) -> bool:
        scheme, _, value = (header or "").partition(" ")
        expected = self.token.encode("utf-8")
        # Constant-time: compare_digest even when the scheme is wrong.
        matches = hmac.compare_digest(value.strip().encode("utf-8"), expected)
        return scheme.lower() == "bearer" and matches

    def answer(self, path: str) -> tuple[int, dict[str, Any]]:
        try:
            client = self.client()
            if path == "/health":
                client.ping()
                return 200, {"status": "ok", "max_runs": self.max_runs}
            if path == "/capacity":
                in_use = protocol.slots_in_use(client)
                return 200, {"max_runs": self.max_runs, "in_use": in_use,
                             "available": max(0, self.max_runs - in_use)}
        except redis.RedisError as exc:
            return 503, {"status": "unavailable", "detail": f"redis: {type(exc).__name__}"}
        return 404, {"error": {"code": "not_found", "message": "GET /health or /capacity"}}


def _handler_for(server: HealthServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        timeout = 10  # a client that stalls does not hold a thread for long
        server_version = "kionga-runner"
        sys_version = ""

        def do_GET(self) -> None:
            if not server.authorized(self.headers.get("Authorization")):
                self._send(401, {"error": {"code": "not_authenticated",
                                           "message": "a valid bearer token is required"}},
                           {"WWW-Authenticate": "Bearer"})
                return
            status, body = server.answer(self.path.split("?", 1)[0])
            self._send(status, body)

        def _send(self, status: int, body: dict[str, Any],
                  headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode("utf-8")
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.send_header("Cache-Control", "no-store")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("health: " + format, *args)

    return Handler
