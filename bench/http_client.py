"""The benchmark's client for the measured requests: kept-alive HTTP/1.1 connections,
httptools (llhttp, in C) parsing the answers. `Connection` is one blocking socket per
client thread (bench/runs.py); `AsyncClient` a pool of connections on the asyncio loop
for thousands of lanes waiting at once (bench/capacity.py), each connection an
asyncio.Protocol whose bytes go straight to the parser.

httpx (httpcore and h11 in pure Python, a pool, an event hook layer) spent about 3 ms of
CPU per run on this 2-core machine, where the stack under test has 2 cores for itself
and the client; the standard library's http.client still spent ~0.25 ms of wall time
per request parsing the answer's head (email.parser) above what the socket took. This
one leaves the figures to the stack, as a client in a compiled language would. It is
still a fair client: it reads every body to its end (chunked or sized, through the
same parser uvicorn uses) and keeps the connection for the next request, reconnecting
when the server closed it. An answer whose connection ends before its body's end
(a cut stream) raises ConnectionError where it is read.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections import deque
from collections.abc import AsyncIterator, Iterator
from typing import Any, cast
from urllib.parse import urlsplit

import httptools

READ_BYTES = 65536
# An AsyncClient's idle connection is used again only within this many seconds: below
# uvicorn's 5 s keep-alive (the Procfile's), so a request does not meet a server
# closing that connection (a request it may have read, then tried again).
MAX_IDLE = 4.0


def _request(method: str, path: str, head: str, body: Any, accept: str, token: str | None,
             extra: dict[str, str] | None = None) -> bytes:
    data = b"" if body is None else json.dumps(body).encode()
    more = "" if token is None else f"Authorization: Bearer {token}\r\n"
    if extra:
        more += "".join(f"{name}: {value}\r\n" for name, value in extra.items())
    return (f"{method} {path} HTTP/1.1\r\n{head}{more}Accept: {accept}\r\n"
            f"Content-Length: {len(data)}\r\n\r\n").encode() + data


def _fixed_head(base_url: str) -> tuple[tuple[str, int], str]:
    """The server's address and the head lines every request to it carries."""
    url = urlsplit(base_url)
    return ((url.hostname or "127.0.0.1", url.port or 80),
            f"Host: {url.netloc}\r\nContent-Type: application/json\r\n")


class Lines:
    """A body's bytes, in chunks of any size, into its lines (without their "\\n")."""

    def __init__(self) -> None:
        self._pending = b""

    def feed(self, chunk: bytes) -> list[str]:
        *complete, self._pending = (self._pending + chunk).split(b"\n")
        return [line.decode() for line in complete]

    def rest(self) -> list[str]:
        return [self._pending.decode()] if self._pending else []


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
        self._address, self._fixed = _fixed_head(base_url)
        self._token = token
        self._sock: socket.socket | None = None
        self._last: Response | None = None

    def send(self, method: str, path: str, body: Any = None,
             accept: str = "application/json") -> Response:
        """The response, its body not read yet (read it, or its lines, to the end)."""
        request = _request(method, path, self._fixed, body, accept, self._token)
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
    splitter = Lines()
    while chunk := response.read1():
        yield from splitter.feed(chunk)
    yield from splitter.rest()


class AsyncResponse:
    """One answer on an AsyncClient's connection: `status` once `head()` returned; its
    body read with read() or read1() as it arrives. close() gives up an answer not read
    to its end (its connection is closed, as no other answer can follow on it)."""

    def __init__(self, wire: _Wire, timeout: float) -> None:
        self._wire = wire
        self._timeout = timeout
        self._chunks: deque[bytes] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._error: Exception | None = None
        self.status = 0
        self.keep_alive = True
        self.complete = False
        self.began = False  # a byte of the answer arrived

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _fail(self, error: Exception) -> None:
        if self._error is None:
            self._error = error
        self._wake()

    async def _wait(self) -> None:
        """Until more of the answer (or its end, or its failure) arrived: at most the
        client's timeout, after which the connection is given up."""
        if self._error is not None:
            raise self._error
        loop = asyncio.get_running_loop()
        waiter = self._waiter = loop.create_future()
        timer = loop.call_later(self._timeout, self._expire)
        try:
            await waiter
        finally:
            timer.cancel()
            self._waiter = None
        if self._error is not None and not self._chunks and not self.complete:
            raise self._error

    def _expire(self) -> None:
        self._fail(TimeoutError(f"no answer within {self._timeout} s"))
        self._wire.close()

    async def head(self) -> int:
        while not self.status:
            await self._wait()
        return self.status

    async def read1(self) -> bytes:
        """The body bytes that arrived next (b"" at its end)."""
        while not self._chunks and not self.complete:
            await self._wait()
        if self._chunks:
            return b"".join([self._chunks.popleft() for _ in range(len(self._chunks))])
        return b""

    async def read(self) -> bytes:
        parts = []
        while chunk := await self.read1():
            parts.append(chunk)
        return b"".join(parts)

    def close(self) -> None:
        if not self.complete:
            self._wire.close()


class _Wire(asyncio.Protocol):
    """One connection of an AsyncClient: its bytes through httptools into the answer
    being read; back in the client's idle list when an answer ends and it may be
    kept."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client
        self._parser = httptools.HttpResponseParser(self)
        self._transport: asyncio.Transport | None = None
        self.answer: AsyncResponse | None = None
        self.open = True
        self.idle_since = 0.0  # time.monotonic() when its last answer ended

    def send(self, request: bytes, timeout: float) -> AsyncResponse:
        assert self._transport is not None
        self.answer = AsyncResponse(self, timeout)
        self._transport.write(request)
        return self.answer

    def close(self) -> None:
        self.open = False
        if self._transport is not None:
            self._transport.close()

    # asyncio's callbacks
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # a cast, not an isinstance check: uvloop's transports are not asyncio's classes
        self._transport = cast(asyncio.Transport, transport)  # TCP_NODELAY set by asyncio

    def data_received(self, data: bytes) -> None:
        answer = self.answer
        if answer is None:  # nothing asked: a server's word out of turn ends the connection
            self.close()
            return
        answer.began = True
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as error:
            answer._fail(ConnectionError(f"unparsable answer: {error}"))
            self.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self.open = False
        if self.answer is not None and not self.answer.complete:
            self.answer._fail(ConnectionError("the server closed the connection mid-answer"))

    # httptools' callbacks
    def on_headers_complete(self) -> None:
        assert self.answer is not None
        self.answer.status = self._parser.get_status_code()
        self.answer.keep_alive = self._parser.should_keep_alive()
        self.answer._wake()

    def on_body(self, body: bytes) -> None:
        assert self.answer is not None
        self.answer._chunks.append(body)
        self.answer._wake()

    def on_message_complete(self) -> None:
        answer, self.answer = self.answer, None
        assert answer is not None
        answer.complete = True
        answer._wake()
        if answer.keep_alive and self.open:
            self.idle_since = time.monotonic()
            self._client._idle.append(self)
        else:
            self.close()


class AsyncClient:
    """Kept-alive connections to one server for asyncio tasks: a request takes the
    connection released last (the warmest: servers close the idle ones) if it has been
    idle at most MAX_IDLE, or opens one; an answer read to its end gives its
    connection back. `token` authorizes every
    request unless a request names its own."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float = 60.0) -> None:
        self._address, self._fixed = _fixed_head(base_url)
        self._token = token
        self._timeout = timeout
        self._idle: list[_Wire] = []

    async def send(self, method: str, path: str, body: Any = None,
                   accept: str = "application/json", token: str | None = None,
                   headers: dict[str, str] | None = None) -> AsyncResponse:
        """The response once its head is in, its body not read yet (read it to its end,
        or close() it)."""
        request = _request(method, path, self._fixed, body, accept, token or self._token,
                           headers)
        while self._idle:
            wire = self._idle.pop()
            if not wire.open or time.monotonic() - wire.idle_since > MAX_IDLE:
                wire.close()
                continue
            answer = wire.send(request, self._timeout)
            try:
                await answer.head()
                return answer
            except ConnectionError:
                if answer.began:
                    raise
                # The server closed the kept-alive connection as the request went out
                # (it answered nothing): the request again, on another.
        answer = (await self._connect()).send(request, self._timeout)
        await answer.head()
        return answer

    async def fetch(self, method: str, path: str, body: Any = None,
                    token: str | None = None) -> tuple[int, bytes]:
        """(status, the whole body)."""
        answer = await self.send(method, path, body, token=token)
        return answer.status, await answer.read()

    async def json(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        status, data = await self.fetch(method, path, body)
        return status, json.loads(data or b"null")

    async def _connect(self) -> _Wire:
        loop = asyncio.get_running_loop()
        async with asyncio.timeout(self._timeout):
            _, wire = await loop.create_connection(lambda: _Wire(self), *self._address)
        return wire

    async def aclose(self) -> None:
        while self._idle:
            self._idle.pop().close()


async def alines(response: AsyncResponse) -> AsyncIterator[str]:
    """The body's lines as they arrive (SSE frames come in chunks of any size)."""
    splitter = Lines()
    while chunk := await response.read1():
        for line in splitter.feed(chunk):
            yield line
    for line in splitter.rest():
        yield line
