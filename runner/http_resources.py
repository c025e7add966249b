"""HttpResources: the ResourceClient of production, over the gateway's internal listener.

See runner.resources for the request and response JSON of every call. A predict
with on_delta is streamed (Server-Sent Events). Requests go through the session the
caller shares between runs (runner.listener_http: one per runner process's event loop),
or one of the client's own.

What is sent again when the listener does not answer (the listener restarting, a
kept-alive connection it closed), with the one declared backoff until the client's
timeout:
- a request that never reached it: the connection could not be made (refused,
  unreachable, connect timeout) or the request could not be written (the transport was
  closing);
- a request on a kept-alive connection reused from the pool that was closed or reset
  before the answer's head: the listener closes a connection only between requests
  (idle, or when it stops), so it never read that request;
- a GET (reads: a dataset object, an approval's state) cut before its answer's head.
Nothing else is: a POST on a new connection cut before the answer's head may have been
taken (an upstream call under way), and an answer begun, whatever its status, is never
sent again. Those end `resource_unavailable`, which the node's retry policy handles.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import quote, urlencode

import aiohttp
from yarl import URL

from runner.backends import OnDelta
from runner.failures import http_failure_code
from runner.listener_http import ListenerSession, was_reused
from runner.resources import RUN_CANCELLED, ResourceError
from runner.retry import RetryPolicy, retrying_async

# A streamed answer, and errors as JSON (the listener renders those as everywhere).
STREAMED: Final = "text/event-stream, application/json"

# What a long poll (get_approval) leaves of the client's timeout for the request itself.
LONG_POLL_MARGIN_SECONDS: Final = 5.0

# The request never reached the listener: no connection (refused, unreachable, too
# slow to connect), or the transport was closing before it was written.
UNREACHED: Final = (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError,
                    aiohttp.ClientConnectionResetError)
# The connection was closed or reset before the answer's head.
CUT: Final = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)
# Methods whose request may be sent twice (RFC 9110 9.2.2): ours only read.
SAFE_METHODS: Final = frozenset({"GET"})


class ListenerAway(Exception):  # noqa: N818 - a state of the listener, tried again
    """The listener did not take the request (see the module's rule): sent again."""

    def __init__(self, cause: Exception) -> None:
        super().__init__(type(cause).__name__)
        self.cause = cause


class NotReached(ListenerAway):
    """No connection, or the request could not be written."""


class ClosedUnanswered(ListenerAway):
    """A reused connection (or a GET's) closed or reset before the answer's head."""


# What the retry loop sends again.
LISTENER_AWAY: Final = (ListenerAway,)


@dataclass(frozen=True)
class _Answer:
    status: int
    content_type: str
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class HttpResources:
    def __init__(self, base_url: str, run_credential: str, *, timeout: float = 30.0,
                 session: ListenerSession | None = None,
                 headers: dict[str, str] | None = None) -> None:
        # Paths are relative (no leading slash): they join under /api/v1/.
        self.base_url = base_url.rstrip("/") + "/"
        self._credential = run_credential
        self._timeout = timeout
        # The caller's shared session, else one of the client's own (closed by aclose).
        self._shared = session
        self._own: ListenerSession | None = None
        # More headers on every call (the agent runtime's X-Kionga-Turn, a traceparent).
        base = {"Authorization": f"Bearer {run_credential}", **(headers or {})}
        self._get_headers = {**base, "Accept": "application/json"}
        self._post_headers = {**self._get_headers, "Content-Type": "application/json"}
        self._stream_headers = {**self._post_headers, "Accept": STREAMED}
        # As httpx's timeout was: to connect (a place in the pool included), and between
        # two reads of the answer; no bound on the whole (a stream takes its time).
        self._limits = aiohttp.ClientTimeout(total=None, connect=timeout,
                                             sock_connect=timeout, sock_read=timeout)
        # A call's answer may take longer than that to start: a listener under load
        # queues the request before its work begins, and once begun bounds its own
        # waits (a call slot, each upstream read) below the client's timeout. Failing
        # the node there would fail runs the listener is about to serve, so the call
        # is bounded by its node's timeout (the engine cancels it), not by ours.
        self._calls = aiohttp.ClientTimeout(total=None, connect=timeout,
                                            sock_connect=timeout, sock_read=None)
        self._reconnect = RetryPolicy(initial=0.05, factor=2.0, max_delay=0.5,
                                      deadline=timeout, retry_on=LISTENER_AWAY)

    @property
    def _session(self) -> aiohttp.ClientSession:
        if self._shared is not None:
            return self._shared.session
        if self._own is None:
            self._own = ListenerSession()
        return self._own.session

    async def aclose(self) -> None:
        if self._own is not None:
            await self._own.aclose()

    def secret_values(self) -> Sequence[str]:
        return [self._credential]

    async def predict(self, model_id: str, messages: list[dict[str, Any]],
                      on_delta: OnDelta | None = None) -> dict[str, Any]:
        path = f"models/{_seg(model_id)}/predict"
        if on_delta is None:
            return await self._call("POST", path, {"messages": messages})
        # Streamed: the listener's `delta` events as they come, then `done` or `error`.
        response = await self._send("POST", path, _json_bytes({"messages": messages}),
                                    self._stream_headers)
        try:
            content_type = response.headers.get("Content-Type", "")
            if response.status >= 400 or "text/event-stream" not in content_type:
                body = await response.read()
                return await self._answer(path, _Answer(response.status, content_type, body))
            return await _read_events(path, response, on_delta)
        except (aiohttp.ClientError, TimeoutError) as exc:  # the listener went away mid-answer
            raise ResourceError("resource_unavailable",
                                f"{path}: the gateway cut the answer short "
                                f"({type(exc).__name__})") from None
        finally:
            response.release()

    async def invoke_function(self, name: str, input: Any) -> dict[str, Any]:
        return await self._call("POST", f"functions/{_seg(name)}/invoke", {"input": input})

    async def invoke_connection(
        self, connection_id: str, method: str, path: str, body: Any
    ) -> dict[str, Any]:
        return await self._call(
            "POST", f"agent-api-connections/{_seg(connection_id)}/invoke",
            {"method": method, "path": path, "body": body},
        )

    async def search_knowledge(
        self, knowledge_base_id: str, query: str, limit: int
    ) -> dict[str, Any]:
        return await self._call("POST", f"knowledge-bases/{_seg(knowledge_base_id)}/search",
                                {"query": query, "limit": limit})

    async def read_object(self, dataset_id: str, key: str) -> dict[str, Any]:
        return await self._call("GET", f"datasets/{_seg(dataset_id)}/object?"
                                       + urlencode({"key": key}))

    async def create_approval(
        self, node_id: str, message: str, preview: str, timeout_seconds: int
    ) -> dict[str, Any]:
        return await self._call("POST", "agent-approvals", {
            "node_id": node_id, "message": message, "preview": preview,
            "timeout_seconds": timeout_seconds,
        })

    async def get_approval(self, approval_id: str, wait: float = 0.0) -> dict[str, Any]:
        # A long poll answers within the client's timeout, with room for the request.
        wait = max(0.0, min(wait, self._timeout - LONG_POLL_MARGIN_SECONDS))
        query = f"?wait={wait:.3f}" if wait > 0 else ""
        return await self._call("GET", f"agent-approvals/{_seg(approval_id)}{query}")

    async def _call(self, method: str, path: str, body: Any = None) -> dict[str, Any]:
        if method == "GET":
            response = await self._send(method, path, None, self._get_headers)
        else:
            response = await self._send(method, path, _json_bytes(body), self._post_headers)
        try:
            answer = _Answer(response.status, response.headers.get("Content-Type", ""),
                             await response.read())
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise ResourceError("resource_unavailable",
                                f"{_bare(path)}: the gateway cut the answer short "
                                f"({type(exc).__name__})") from None
        finally:
            response.release()
        return await self._answer(_bare(path), answer)

    async def _send(self, method: str, path: str, data: bytes | None,
                    headers: dict[str, str]) -> aiohttp.ClientResponse:
        """The listener's answer (its head) to the request; sent again by the module's
        rule within the client's timeout (the node's timeout still ends the call first)."""
        url = URL(self.base_url + path, encoded=True)

        async def attempt() -> aiohttp.ClientResponse:
            try:
                return await self._session.request(
                    method, url, data=data, headers=headers,
                    timeout=self._limits if method in SAFE_METHODS else self._calls,
                    allow_redirects=False)
            except UNREACHED as exc:
                raise NotReached(exc) from None
            except CUT as exc:
                if was_reused() or method in SAFE_METHODS:
                    raise ClosedUnanswered(exc) from None
                raise

        what = _bare(path)
        try:
            return await retrying_async(attempt, self._reconnect,
                                        f"{what}: the gateway cannot be reached")
        except ListenerAway as away:  # still away at the client's timeout
            raise ResourceError("resource_unavailable",
                                f"{what}: the gateway cannot be reached "
                                f"({type(away.cause).__name__})") from None
        except (aiohttp.ClientError, TimeoutError) as exc:  # cut, timeouts
            raise ResourceError("resource_unavailable",
                                f"{what}: the gateway cannot be reached ({type(exc).__name__})"
                                ) from None

    async def _answer(self, path: str, response: _Answer) -> dict[str, Any]:
        if response.status >= 400:
            if _error(response).get("code") == RUN_CANCELLED:
                # Failing now would end the run failed; its cancel arrives in a moment
                # and cancels this call (else the node's timeout ends it).
                await asyncio.Event().wait()
            raise _failure(path, response)
        try:
            body = response.json()
        except ValueError:
            raise ResourceError("node_error", f"{path}: the answer is not JSON") from None
        if not isinstance(body, dict):
            raise ResourceError("node_error", f"{path}: the answer is not a JSON object")
        return body


async def _read_events(path: str, response: aiohttp.ClientResponse,
                       on_delta: OnDelta) -> dict[str, Any]:
    """Server-Sent Events of a streamed predict: `delta` {"text"}, then `done` (the
    answer) or `error` (the error shape); an end without either is a cut answer. Read
    to the end after `done`, so the connection goes back to the pool."""
    event, data = "", ""
    done: dict[str, Any] | None = None
    pending = b""
    try:
        async for chunk in response.content.iter_any():
            *lines, pending = (pending + chunk).split(b"\n")
            if done is not None:
                continue
            for raw in lines:
                line = raw.rstrip(b"\r").decode("utf-8", errors="replace")
                if line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data += line[5:].strip()
                elif not line and data:
                    body = _event_body(path, data)
                    if event == "delta" and isinstance(body.get("text"), str):
                        await on_delta(body["text"])
                    elif event == "done":
                        done = body
                        break
                    elif event == "error":
                        raise _event_failure(path, body)
                    event, data = "", ""
    except (aiohttp.ClientError, TimeoutError):
        if done is None:
            raise
    if done is None:
        raise ResourceError("resource_unavailable", f"{path}: the gateway cut the answer short")
    return done


def _event_body(path: str, data: str) -> dict[str, Any]:
    try:
        body = json.loads(data)
    except ValueError:
        raise ResourceError("node_error", f"{path}: a malformed event") from None
    if not isinstance(body, dict):
        raise ResourceError("node_error", f"{path}: a malformed event")
    return body


def _event_failure(path: str, body: dict[str, Any]) -> ResourceError:
    error = body.get("error")
    error = error if isinstance(error, dict) else {}
    code = error.get("code")
    message = error.get("message")
    message = message if isinstance(message, str) else "failed"
    # The same codes an error answer would give (the contract's mapping, by code).
    known = code if code in ("resource_denied", "resource_unavailable") else "node_error"
    return ResourceError(known, f"{path}: {message[:500]}")


def _json_bytes(body: Any) -> bytes:
    # As httpx encoded `json=`: compact, UTF-8, no NaN.
    return json.dumps(body, ensure_ascii=False, separators=(",", ":"),
                      allow_nan=False).encode("utf-8")


def _seg(value: str) -> str:
    return quote(value, safe="")


def _bare(path: str) -> str:
    """The path without its query (a dataset key is not for messages)."""
    return path.partition("?")[0]


def _failure(path: str, response: _Answer) -> ResourceError:
    message = _message(response) or f"HTTP {response.status}"
    return ResourceError(http_failure_code(response.status), f"{path}: {message}")


def _error(response: _Answer) -> dict[str, Any]:
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return {}
    return error if isinstance(error, dict) else {}


def _message(response: _Answer) -> str:
    message = _error(response).get("message")
    return message[:500] if isinstance(message, str) else ""
