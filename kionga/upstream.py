"""Calls from the gateway to the outside (model endpoints, function webhooks, API
connections), with the one error mapping the runner's contract expects.

Secrets go out in headers only and never come back: error messages name the resource
and the kind of failure, never the upstream's text or exception (either may quote a
URL or a header), and every answer is scrubbed of the resource's secret values
before it reaches the runner.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Hashable, Iterable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
from django.conf import settings

from kionga import egress, parsers
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


async def send(what: str, method: str, url: str, *, headers: dict[str, str], timeout: float,
               json_body: Any = None, text_body: str | None = None) -> Answer:
    """One HTTP call on the event loop, done within `timeout` seconds in all (an
    upstream dripping its answer byte by byte cannot hold it longer); connection
    problems, the time limit and oversized answers are resource_unavailable.

    `what` names the resource in messages and logs, e.g. "model 'gpt'".
    """
    try:
        async with asyncio.timeout(timeout), client(timeout) as http, http.stream(
                method, url, headers=_content_type(headers, text_body),
                **_body(json_body, text_body)) as response:
            content = await _read_capped(what, response.aiter_bytes())
            return Answer(response.status_code, content,
                          response.headers.get("content-type", ""), what)
    except (TimeoutError, httpx.HTTPError, httpx.InvalidURL) as exc:
        raise unreachable(what, exc) from None


@asynccontextmanager
async def stream(what: str, url: str, *, headers: dict[str, str], timeout: float,
                 json_body: Any) -> AsyncIterator[httpx.Response]:
    """POST json_body and yield the response once its head arrived (within `timeout`);
    its body is then read as it comes (`lines`), each read within `timeout`."""
    try:
        async with client(timeout) as http:
            async with asyncio.timeout(timeout):
                request = http.build_request("POST", url, headers=headers, json=json_body)
                response = await http.send(request, stream=True)
            try:
                yield response
            finally:
                await response.aclose()
    except (TimeoutError, httpx.HTTPError, httpx.InvalidURL) as exc:
        raise unreachable(what, exc) from None


async def lines(what: str, response: httpx.Response) -> AsyncIterator[str]:
    """The lines of a streamed answer, at most MAX_ANSWER_BYTES; a connection lost or
    a read timeout mid-answer is resource_unavailable ("cut its answer short")."""
    size = 0
    try:
        async for line in response.aiter_lines():
            size += len(line) + 1
            if size > MAX_ANSWER_BYTES:
                raise unavailable(what, f"answered more than {MAX_ANSWER_BYTES} bytes", 502)
            yield line
    except httpx.HTTPError as exc:
        logger.warning("%s cut its answer short (%s)", what, type(exc).__name__)
        raise APIError(502, "resource_unavailable",
                       f"{capital(what)} cut its answer short.") from None


def client(timeout: float) -> httpx.AsyncClient:
    # No redirects: following one could carry the secret headers somewhere else.
    # No proxies from the environment: they would bypass the egress policy.
    return httpx.AsyncClient(timeout=timeout, follow_redirects=False, trust_env=False,
                             transport=egress.guarded_async_transport())


def unreachable(what: str, exc: Exception) -> APIError:
    # One answer whatever went wrong (refused, reset, DNS, egress policy, out of time),
    # so a staff URL cannot be used to map the network; the kind goes to the log only.
    logger.warning("%s cannot be reached (%s)", what, type(exc).__name__)
    return APIError(503, "resource_unavailable", f"{capital(what)} cannot be reached.")


def _content_type(headers: dict[str, str], text_body: str | None) -> dict[str, str]:
    if text_body is None:
        return headers
    return {"Content-Type": "text/plain; charset=utf-8", **headers}


def _body(json_body: Any, text_body: str | None) -> dict[str, Any]:
    if text_body is not None:
        return {"content": text_body.encode("utf-8")}
    return {"json": json_body} if json_body is not None else {}


async def _read_capped(what: str, chunks: AsyncIterator[bytes]) -> bytes:
    parts: list[bytes] = []
    size = 0
    async for chunk in chunks:
        size += len(chunk)
        if size > MAX_ANSWER_BYTES:
            raise unavailable(what, f"answered more than {MAX_ANSWER_BYTES} bytes", 502)
        parts.append(chunk)
    return b"".join(parts)


class _Slots:
    """Counting semaphores by key, made on first use and dropped once idle (a key's
    limit is read when its semaphore is made)."""

    def __init__(self) -> None:
        self._entries: dict[Hashable, tuple[asyncio.Semaphore, list[int]]] = {}

    @asynccontextmanager
    async def hold(self, key: Hashable, limit: int) -> AsyncIterator[None]:
        semaphore, users = self._entries.setdefault(key, (asyncio.Semaphore(limit), [0]))
        users[0] += 1
        try:
            async with semaphore:
                yield
        finally:
            users[0] -= 1
            if not users[0]:
                del self._entries[key]


_SLOTS = _Slots()


@asynccontextmanager
async def call_slot(project_id: Any, resource: str, what: str,
                    timeout: float) -> AsyncIterator[None]:
    """Hold one of the project's and one of the resource's upstream call slots in this
    process (KIONGA_UPSTREAM_CALLS_PER_PROJECT, _PER_RESOURCE) for the body; waiting
    for them counts against `timeout` (then resource_unavailable, which the runner
    retries). One tenant's slow upstream holds at most that many sockets and answers;
    other projects' calls and /healthz go on at once."""
    async with AsyncExitStack() as held:
        try:
            async with asyncio.timeout(timeout):
                # The resource's slot first: a call queued behind its own resource's
                # full slots must not hold one of the project's meanwhile.
                await held.enter_async_context(_SLOTS.hold(
                    ("resource", project_id, resource),
                    settings.KIONGA_UPSTREAM_CALLS_PER_RESOURCE))
                await held.enter_async_context(_SLOTS.hold(
                    ("project", project_id), settings.KIONGA_UPSTREAM_CALLS_PER_PROJECT))
        except TimeoutError:
            raise unavailable(what, "is busy (too many calls in flight)", 503) from None
        yield


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
