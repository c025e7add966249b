"""uvicorn's httptools protocol with a bound on what one request's head can make it
buffer, and on how long that head may take: the gateway's listeners
(kionga.http_protocol) and the agent runtime (agents.http) run it. No Django here.

httptools (llhttp, in C) costs less than half of h11's CPU per request (measured with
a streamed response of six chunks: 0.19 ms against 0.44 ms of server CPU), but it
buffers a header block of any size: a client sending one endless header line would
grow the process without limit. h11 has that bound built in (its
max_incomplete_event_size); this protocol adds it to httptools: the bytes received
while a request's head is incomplete are counted, and past `max_head_bytes` the
request is answered 431 and the connection closed. The count is per read (a read is
at most 64 KiB), so a head is buffered up to the bound plus two reads at most.

A request's head must also arrive in time: from the connection's start (a connection
that sends nothing) or from the head's first byte (the next request on a kept-alive
one), `head_timeout()` seconds; past it a half-sent head is answered 408 and the
connection closed (one that sent nothing is just closed). Subclasses set the bound,
the timeout and how an error's JSON body is written.

Every close lingers (docs/decisions/lingering-close.md): closing a socket with unread
bytes in it makes the kernel reset the connection, and a client still sending (a body
past its limit, a huge head, a dripped body answered 408) would see "connection reset"
instead of its answer. So the answer is followed by FIN only, whatever still arrives is
read and dropped, and the socket closes when the client closes its side or after
LINGER_SECONDS.
"""

from __future__ import annotations

import asyncio
from typing import Any, Final

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

# Long enough for a client to read its answer and hang up; Apache lingers 2 s as well.
LINGER_SECONDS: Final = 2.0


class LingeringTransport:
    """The connection's transport, whose close() half-closes and lingers. Everything
    else is the transport's own (uvicorn and its flow control hold this object)."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self.lingering = False
        self.at_once = False
        self._timer: asyncio.TimerHandle | None = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)

    def is_closing(self) -> bool:
        return self.lingering or self._transport.is_closing()

    def close(self) -> None:
        if self._transport.is_closing():
            return
        if self.at_once or not self._transport.can_write_eof():
            self.lingering = True
            self._transport.close()  # a linger under way ends too: the server is stopping
            return
        if self.lingering:
            return
        self.lingering = True
        self._transport.write_eof()  # FIN once the answer is written
        self._transport.resume_reading()  # read what still arrives, to drop it
        self._timer = self._loop.call_later(LINGER_SECONDS, self._transport.close)

    def closed(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


class HeadBoundHttpToolsProtocol(HttpToolsProtocol):
    max_head_bytes: int = 16 * 1024

    def head_timeout(self) -> float:
        raise NotImplementedError

    def error_json(self, status: int, code: str, message: str) -> bytes:
        raise NotImplementedError

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_open = False  # a request's head has begun and is not complete
        self._head_bytes = 0
        self._refused = False
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_seen = False  # a byte of the awaited head arrived

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._lingering = LingeringTransport(transport, self.loop)
        super().connection_made(self._lingering)  # type: ignore[arg-type]
        self._await_head()

    def connection_lost(self, exc: Exception | None) -> None:
        self._head_done()
        self._lingering.closed()
        super().connection_lost(exc)

    def shutdown(self) -> None:
        # The server is stopping: its connections close at once, not one linger later.
        self._lingering.at_once = True
        super().shutdown()

    def answer_streaming(self) -> bool:
        """An answer's head is sent and its body still going (a stream)."""
        return (self.cycle is not None and self.cycle.response_started
                and not self.cycle.response_complete)

    def close_at_once(self) -> None:
        """Close without lingering: the app sees its client gone (http.disconnect)."""
        self._lingering.at_once = True
        self.transport.close()

    def _await_head(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self.head_timeout(),
                                                    self._head_timed_out)

    def _head_done(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None
        self._head_seen = False

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self._refused or self.transport.is_closing():
            return
        if not self._head_seen:
            self._refused = True
            self.transport.close()  # nothing was asked: nothing to answer
            return
        self._refuse(408, "Request Timeout", "request_timeout",
                     "The request's head did not arrive in time.")

    def data_received(self, data: bytes) -> None:
        if self._refused or self._lingering.lingering:
            return  # closing: whatever still arrives is dropped
        was_open = self._head_open
        super().data_received(data)
        # Only a read that is head from its first byte to its last counts: the one a
        # head begins in may end a body before it, the one it completes in may hold a
        # body after it. So a head is buffered up to the bound plus two reads at most.
        if was_open and self._head_open:
            self._head_bytes += len(data)
            if self._head_bytes > self.max_head_bytes:
                self._refuse_head()

    def on_message_begin(self) -> None:
        self._head_open, self._head_bytes = True, 0
        self._await_head()  # the next request on a kept-alive connection
        self._head_seen = True
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._head_open = False
        self._head_done()
        super().on_headers_complete()

    def _refuse_head(self) -> None:
        self._refuse(431, "Request Header Fields Too Large", "request_header_fields_too_large",
                     f"A request's head may be at most {self.max_head_bytes} bytes.")

    def _refuse(self, status: int, reason: str, code: str, message: str) -> None:
        self._refused = True
        self._head_done()
        if self.cycle is not None and not self.cycle.response_complete:
            # A pipelined head behind an answer still being sent (a stream, say): an
            # answer of ours would land inside that one. The connection just closes.
            self.transport.close()
            return
        body = self.error_json(status, code, message)
        self.transport.write(b"".join([
            f"HTTP/1.1 {status} {reason}\r\n".encode(),
            b"content-type: application/json\r\n",
            b"content-length: ", str(len(body)).encode(), b"\r\n",
            b"connection: close\r\n\r\n", body]))
        self.transport.close()
