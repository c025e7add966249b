"""Calls from the gateway to the outside (model endpoints, function webhooks, API
connections), with the one error mapping the runner's contract expects.

Secrets go out in headers only and never come back: error messages name the resource
and the kind of failure, never the upstream's text or exception (either may quote a
URL or a header), and every answer is scrubbed of the resource's secret values
before it reaches the runner.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import AsyncIterator, Hashable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Final

import aiohttp
from django.conf import settings

from kionga import parsers, upstream_sessions
from kionga.errors import APIError
from runner.redact import MIN_SECRET_CHARS, Redactor

logger = logging.getLogger(__name__)

# Bigger answers are refused: they would be truncated by the runner anyway.
MAX_ANSWER_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class Answer:
    status: int
    content: bytes
    content_type: str
    what: str = "the upstream"

    def json(self) -> Any:
        """The strict parse (kionga.parsers.loads): a ValueError for anything else."""
        return parsers.loads(self.content)

    def json_or_text(self) -> Any:
        """Parsed JSON when it is JSON, else the text (e.g. an HTML error page).

        JSON we cannot pass on (lone surrogates, 1e999, too deep) is a 502: passing
        it as text would hide that the upstream's answer is broken.
        """
        try:
            return self.json()
        except parsers.JSONRefused as exc:
            reason = str(exc).rstrip(".")
            raise unavailable(self.what, f"answered JSON that cannot be used ({reason})",
                              502) from None
        except ValueError:
            return self.content.decode("utf-8", errors="replace")


# How long a stream's body may take to end once its caller read what it needed.
END_WAIT_SECONDS: Final = 0.1
# What the client raises when an upstream cannot be reached, is out of time, speaks no
# HTTP or cuts its answer short; ValueError: a URL or header value it cannot send.
FAILURES: Final = (aiohttp.ClientError, TimeoutError, OSError, ValueError)


async def send(what: str, method: str, url: str, *, project: Hashable,
               headers: dict[str, str], timeout: float, json_body: Any = None,
               text_body: str | None = None) -> Answer:
    """One HTTP call on the event loop, on `project`'s connections (kionga.upstream_sessions),
    done within `timeout` seconds in all (an upstream dripping its answer byte by byte
    cannot hold it longer); connection problems, the time limit and oversized answers
    are resource_unavailable.

    `what` names the resource in messages and logs, e.g. "model 'gpt'".
    """
    headers, data = _body(headers, json_body, text_body)
    sessions = await upstream_sessions.of_loop()
    entry = sessions.take(project)
    try:
        async with asyncio.timeout(timeout), entry.session.request(
                method, url, headers=headers, data=data, allow_redirects=False) as response:
            content = await _read_capped(what, response.content)
            return Answer(response.status, content,
                          response.headers.get("Content-Type", ""), what)
    except FAILURES as exc:
        raise unreachable(what, exc) from None
    finally:
        sessions.give_back(entry)


class Streamed:
    """A streamed answer whose head arrived: its status and content type; its body is
    read whole (`read`) or line by line (`lines`)."""

    def __init__(self, what: str, response: aiohttp.ClientResponse) -> None:
        self.what = what
        self.status = response.status
        self.content_type = response.headers.get("Content-Type", "")
        self.content = response.content

    async def read(self) -> bytes:
        """The whole body, at most MAX_ANSWER_BYTES."""
        try:
            return await _read_capped(self.what, self.content)
        except FAILURES as exc:
            raise unreachable(self.what, exc) from None


@asynccontextmanager
async def stream(what: str, url: str, *, project: Hashable, headers: dict[str, str],
                 timeout: float, json_body: Any) -> AsyncIterator[Streamed]:
    """POST json_body and yield the answer once its head arrived (within `timeout`);
    its body is then read as it comes (`lines`), each read within `timeout`."""
    headers, data = _body(headers, json_body, None)
    sessions = await upstream_sessions.of_loop()
    entry = sessions.take(project)
    try:
        try:
            async with asyncio.timeout(timeout):
                response = await entry.session.request(
                    "POST", url, headers=headers, data=data, allow_redirects=False,
                    timeout=_read_timeout(timeout))
        except FAILURES as exc:
            raise unreachable(what, exc) from None
        try:
            yield Streamed(what, response)
            await _wait_for_end(response.content)
        finally:
            # Back to the pool when the body was read to its end, else closed.
            response.release()
    finally:
        sessions.give_back(entry)


async def _wait_for_end(content: aiohttp.StreamReader) -> None:
    """A caller that stopped at the stream's last event (`[DONE]`) leaves the body's
    end (the chunked terminator) unread, often in a segment of its own: wait for it a
    moment, so the connection goes back to the pool instead of being closed."""
    if content.is_eof():
        return
    try:
        async with asyncio.timeout(END_WAIT_SECONDS):
            await content.wait_eof()
    except FAILURES:
        pass  # then closed


def lines(what: str, answer: Streamed) -> AsyncIterator[str]:
    """The lines of a streamed answer, at most MAX_ANSWER_BYTES; a connection lost or
    a read timeout mid-answer is resource_unavailable ("cut its answer short")."""
    return _Lines(what, answer.content)


class _Lines:
    """Splits the body on CR, LF or CRLF (Server-Sent Events' line ends) as it arrives:
    one read per network chunk, its lines handed out from a list (an iterator, not an
    async generator: nothing to finalize when the caller stops at `[DONE]`)."""

    def __init__(self, what: str, content: aiohttp.StreamReader) -> None:
        self._what, self._content = what, content
        self._ready: list[str] = []
        self._next = 0
        self._partial: list[bytes] = []
        self._size = 0
        self._ended = False

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        while self._next >= len(self._ready):
            if self._ended:
                raise StopAsyncIteration
            await self._read()
        line = self._ready[self._next]
        self._next += 1
        return line

    async def _read(self) -> None:
        try:
            chunk = await self._content.readany()
        except FAILURES as exc:
            logger.warning("%s cut its answer short (%s)", self._what, type(exc).__name__)
            raise APIError(502, "resource_unavailable",
                           f"{capital(self._what)} cut its answer short.") from None
        self._ready, self._next = [], 0
        if not chunk:
            self._ended = True
            if self._partial:
                self._ready = [_text(b"".join(self._partial))]
            return
        self._size += len(chunk)
        if self._size > MAX_ANSWER_BYTES:
            raise unavailable(self._what, f"answered more than {MAX_ANSWER_BYTES} bytes", 502)
        if b"\n" not in chunk and b"\r" not in chunk:
            self._partial.append(chunk)
            return
        if self._partial:
            self._partial.append(chunk)
            chunk = b"".join(self._partial)
        parts = chunk.splitlines(keepends=True)
        # The last part waits for more unless it ended with LF (a CR may be CRLF's half).
        self._partial = [] if parts[-1].endswith(b"\n") else [parts.pop()]
        self._ready = [_text(part.rstrip(b"\r\n")) for part in parts]


def _text(line: bytes) -> str:
    return line.decode("utf-8", errors="replace")


@functools.cache
def _read_timeout(seconds: float) -> aiohttp.ClientTimeout:
    # sock_read: the longest wait for the next bytes of the answer.
    return aiohttp.ClientTimeout(sock_read=seconds)


def unreachable(what: str, exc: Exception) -> APIError:
    # One answer whatever went wrong (refused, reset, DNS, egress policy, out of time),
    # so a staff URL cannot be used to map the network; the kind goes to the log only.
    logger.warning("%s cannot be reached (%s)", what, type(exc).__name__)
    return APIError(503, "resource_unavailable", f"{capital(what)} cannot be reached.")


# JSON bodies as compact UTF-8 without NaN or infinities; made once (json.dumps with
# options makes an encoder per call).
_JSON_BODY: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
                                     allow_nan=False)


def _body(headers: dict[str, str], json_body: Any,
          text_body: str | None) -> tuple[dict[str, str], bytes | None]:
    """The headers with the body's content type, and the body's bytes (JSON as compact
    UTF-8, without NaN or infinities)."""
    if text_body is not None:
        content_type, data = "text/plain; charset=utf-8", text_body.encode()
    elif json_body is not None:
        content_type = "application/json"
        data = _JSON_BODY.encode(json_body).encode()
    else:
        return headers, None
    if any(name.lower() == "content-type" for name in headers):
        return headers, data  # the caller's own
    return {"Content-Type": content_type, **headers}, data


async def _read_capped(what: str, content: aiohttp.StreamReader) -> bytes:
    parts: list[bytes] = []
    size = 0
    while chunk := await content.readany():
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise unavailable(what, f"answered more than {MAX_ANSWER_BYTES} bytes", 502)
        parts.append(chunk)
    return b"".join(parts)


class _Slot:
    __slots__ = ("semaphore", "users")

    def __init__(self, limit: int) -> None:
        self.semaphore = asyncio.Semaphore(limit)
        self.users = 0  # calls holding or waiting for it


class _Slots:
    """Counting semaphores by key, made on first use and dropped once idle (a key's
    limit is read when its semaphore is made)."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, _Slot] = {}

    def join(self, key: Hashable, limit: int) -> _Slot:
        slot = self._entries.get(key)
        if slot is None:
            slot = self._entries[key] = _Slot(limit)
        slot.users += 1
        return slot

    def leave(self, key: Hashable, slot: _Slot, held: bool) -> None:
        if held:
            slot.semaphore.release()
        slot.users -= 1
        if not slot.users:
            del self._entries[key]


_SLOTS = _Slots()


class call_slot:  # noqa: N801  (used as the context manager function it was)
    """Hold one of the project's and one of the resource's upstream call slots in this
    process (KIONGA_UPSTREAM_CALLS_PER_PROJECT, _PER_RESOURCE) for the body; waiting
    for them counts against `timeout` (then resource_unavailable, which the runner
    retries). One tenant's slow upstream holds at most that many sockets and answers;
    other projects' calls and /healthz go on at once.

    A class rather than an async generator: every model call enters one, and a free
    slot (the common case) is taken without a timer or a generator."""

    def __init__(self, project_id: Any, resource: str, what: str, timeout: float) -> None:
        # The resource's slot first: a call queued behind its own resource's full
        # slots must not hold one of the project's meanwhile.
        self._wanted = ((("resource", project_id, resource),
                         settings.KIONGA_UPSTREAM_CALLS_PER_RESOURCE),
                        (("project", project_id), settings.KIONGA_UPSTREAM_CALLS_PER_PROJECT))
        self._what, self._timeout = what, timeout
        self._joined: list[tuple[Hashable, _Slot, bool]] = []

    async def __aenter__(self) -> None:
        deadline = asyncio.get_running_loop().time() + self._timeout
        try:
            for key, limit in self._wanted:
                slot = _SLOTS.join(key, limit)
                self._joined.append((key, slot, False))
                if slot.semaphore.locked():
                    async with asyncio.timeout_at(deadline):
                        await slot.semaphore.acquire()
                else:
                    await slot.semaphore.acquire()  # free: taken at once
                self._joined[-1] = (key, slot, True)
        except BaseException as exc:
            self._leave()
            if isinstance(exc, TimeoutError):
                raise unavailable(self._what, "is busy (too many calls in flight)",
                                  503) from None
            raise

    async def __aexit__(self, *exc_info: object) -> None:
        self._leave()

    def _leave(self) -> None:
        while self._joined:
            _SLOTS.leave(*self._joined.pop())


def check_success(what: str, answer: Answer) -> Answer:
    """Map a failing status: 429 and 5xx may pass on retry; 3xx and other 4xx will not."""
    status = answer.status
    if status == 429 or status >= 500:
        raise unavailable(what, f"answered HTTP {status}", 503 if status == 429 else 502)
    if not 200 <= status < 300:
        logger.warning("%s answered HTTP %s", what, status)
        raise APIError(422, "upstream_rejected", f"{capital(what)} answered HTTP {status}.",
                       {"status": status})
    return answer


def unavailable(what: str, problem: str, status: int) -> APIError:
    # Logged without URL, headers or body: any of them may hold a secret.
    logger.warning("%s %s", what, problem)
    return APIError(status, "resource_unavailable", f"{capital(what)} {problem}.")


def capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def secret_values(values: Iterable[str]) -> list[str]:
    """The strings to scrub: each secret, and the credential part of "Scheme credential"."""
    found: set[str] = set()
    for value in values:
        if not isinstance(value, str):
            continue
        for candidate in (value.strip(), value.strip().split(" ")[-1]):
            if len(candidate) >= MIN_SECRET_CHARS:
                found.add(candidate)
    return sorted(found, key=len, reverse=True)


def scrub(value: Any, secrets: list[str]) -> Any:
    """value with every secret replaced by [redacted], in strings and object keys.

    The runner's Redactor does the replacing (literal secrets only: an upstream's
    answer is data the graph goes on with, not an event), so both sides hide the same.
    """
    if not secrets:
        return value
    return _scrub(value, Redactor(secrets, builtin=False))


def _scrub(value: Any, redactor: Redactor) -> Any:
    if isinstance(value, str):
        return redactor.redact(value)
    if isinstance(value, list):
        return [_scrub(item, redactor) for item in value]
    if isinstance(value, dict):
        return {_scrub(k, redactor): _scrub(v, redactor) for k, v in value.items()}
    return value
