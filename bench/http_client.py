"""The benchmark's client for the measured requests: one kept-alive HTTP/1.1 connection
per client thread, a plain socket with httptools (llhttp, in C) parsing the answers.

httpx (httpcore and h11 in pure Python, a pool, an event hook layer) spent about 3 ms of
CPU per run on this 2-core machine, where the stack under test has 2 cores for itself
and the client; the standard library's http.client still spent ~0.25 ms of wall time
per request parsing the answer's head (email.parser) above what the socket took. This
one leaves the figures to the stack, as a client in a compiled language would. It is
still a fair client: it reads every body to its end (chunked or sized, through the
same parser uvicorn uses) and keeps the connection for the next request, reconnecting
when the server closed it.
"""

from __future__ import annotations

import json
import socket
from collections import deque
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httptools

READ_BYTES = 65536


class Response:
    """One answer: `status` once its head is in; its body read with read() or read1()."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._parser = httptools.HttpResponseParser(self)
        self._chunks: deque[bytes] = deque()
        self._head_done = False
        self.complete = False
        self.keep_alive = True
        while not self._head_done:
            self._feed()
        self.status = self._parser.get_status_code()

    # httptools' callbacks
    def on_headers_complete(self) -> None:
        self._head_done = True
        self.keep_alive = self._parser.should_keep_alive()

    def on_body(self, body: bytes) -> None:
        self._chunks.append(body)

    def on_message_complete(self) -> None:
        self.complete = True

    def _feed(self) -> None:
        data = self._sock.recv(READ_BYTES)
        if not data:
            raise ConnectionError("the server closed the connection mid-answer")
        self._parser.feed_data(data)

    def read1(self, _size: int = READ_BYTES) -> bytes:
        """The body bytes that arrived next (b"" at its end), as http.client's read1."""
        while not self._chunks and not self.complete:
            self._feed()
        if self._chunks:
            return b"".join([self._chunks.popleft() for _ in range(len(self._chunks))])
        return b""

    def read(self) -> bytes:
        parts = []
        while chunk := self.read1():
            parts.append(chunk)
        return b"".join(parts)


class Connection:
    def __init__(self, base_url: str, token: str) -> None:
        url = urlsplit(base_url)
        self._address = (url.hostname or "127.0.0.1", url.port or 80)
        self._fixed = (f"Host: {url.netloc}\r\nAuthorization: Bearer {token}\r\n"
                       "Content-Type: application/json\r\n")
        self._sock: socket.socket | None = None
        self._last: Response | None = None

    def send(self, method: str, path: str, body: Any = None,
             accept: str = "application/json") -> Response:
        """The response, its body not read yet (read it, or its lines, to the end)."""
        data = b"" if body is None else json.dumps(body).encode()
        request = (f"{method} {path} HTTP/1.1\r\n{self._fixed}Accept: {accept}\r\n"
                   f"Content-Length: {len(data)}\r\n\r\n").encode() + data
        if self._last is not None and not (self._last.complete and self._last.keep_alive):
            self._close()  # the last answer was not read to its end, or the server closes
        try:
            self._last = self._exchange(request)
        except ConnectionError:  # the server closed the kept-alive connection: once more
            self._close()
            self._last = self._exchange(request)
        return self._last

    def _exchange(self, request: bytes) -> Response:
        sock = self._connected()
        sock.sendall(request)
        return Response(sock)

    def json(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        response = self.send(method, path, body)
        return response.status, json.loads(response.read() or b"null")

    def _connected(self) -> socket.socket:
        if self._sock is None:
            self._sock = socket.create_connection(self._address, timeout=60)
            self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return self._sock

    def _close(self) -> None:
        if self._sock is not None:
            self._sock.close()
        self._sock, self._last = None, None


def lines(response: Response) -> Iterator[str]:
    """The body's lines as they arrive (SSE frames come in chunks of any size)."""
    pending = b""
    while chunk := response.read1():
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for line in complete:
            yield line.decode()
    if pending:
        yield pending.decode()
