"""The benchmark's client for the measured requests: one kept-alive HTTP/1.1 connection
per client thread, on the standard library's http.client.

httpx (httpcore and h11 in pure Python, a pool, an event hook layer) spent about 3 ms of
CPU per run on this 2-core machine, where the stack under test has 2 cores for itself
and the client; this one spends about a third of that, so the figures measure the
stack. It is still a fair client: it reads every body to its end and keeps the
connection for the next request (http.client reconnects by itself after a close).
"""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit


class Connection:
    def __init__(self, base_url: str, token: str) -> None:
        url = urlsplit(base_url)
        self._conn = http.client.HTTPConnection(url.hostname or "127.0.0.1", url.port,
                                                timeout=60)
        self._headers = {"Authorization": f"Bearer {token}",
                         "Content-Type": "application/json"}

    def send(self, method: str, path: str, body: Any = None,
             accept: str = "application/json") -> http.client.HTTPResponse:
        """The response, its body not read yet (read it, or its lines, to the end)."""
        data = None if body is None else json.dumps(body).encode()
        self._conn.request(method, path, body=data, headers={**self._headers, "Accept": accept})
        return self._conn.getresponse()

    def json(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        response = self.send(method, path, body)
        return response.status, json.loads(response.read() or b"null")


def lines(response: http.client.HTTPResponse) -> Iterator[str]:
    """The body's lines as they arrive (SSE frames come in chunks of any size)."""
    pending = b""
    while chunk := response.read1(65536):
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line.decode()
    if pending:
        yield pending.decode()
