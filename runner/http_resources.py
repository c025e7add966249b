"""HttpResources: the ResourceClient of production, over the gateway's internal listener.

See runner.resources for the request and response JSON of every call. A predict
with on_delta is streamed (Server-Sent Events); a call that cannot reach the listener
(refused, reset before an answer) is tried again within the client's timeout.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import quote

import httpx

from runner.backends import OnDelta
from runner.failures import http_failure_code
from runner.resources import RUN_CANCELLED, ResourceError
from runner.retry import RetryPolicy, retrying_async

# A streamed answer, and errors as JSON (the listener renders those as everywhere).
STREAMED: Final = "text/event-stream, application/json"

# What a long poll (get_approval) leaves of the client's timeout for the request itself.
LONG_POLL_MARGIN_SECONDS: Final = 5.0

# The listener itself cannot be reached or dropped the connection before answering:
# refused (not listening), reset or closed (restarting), and nothing was answered.
LISTENER_AWAY: Final = (httpx.ConnectError, httpx.ConnectTimeout, httpx.RemoteProtocolError,
                        httpx.ReadError, httpx.WriteError)


class HttpResources:
    def __init__(self, base_url: str, run_credential: str, *, timeout: float = 30.0,
                 transport: httpx.AsyncBaseTransport | None = None,
                 headers: dict[str, str] | None = None) -> None:
        # A trailing slash makes relative paths join under /api/v1/ instead of replacing it.
        self.base_url = base_url.rstrip("/") + "/"
        self._credential = run_credential
        self._timeout = timeout
        self._transport = transport
        # More headers on every call (the agent runtime's X-Kionga-Turn).
        self._headers = dict(headers or {})
        # Made on the first call: most graphs call no resource, and a client costs
        # about half a millisecond to build.
        self._http: httpx.AsyncClient | None = None
        self._reconnect = RetryPolicy(initial=0.05, factor=2.0, max_delay=0.5,
                                      deadline=timeout, retry_on=LISTENER_AWAY)

    @property
    def _client(self) -> httpx.AsyncClient:
        if self._http is None:
            self._http = httpx.AsyncClient(
                base_url=self.base_url,
                headers={"Authorization": f"Bearer {self._credential}",
                         "Accept": "application/json", **self._headers},
                timeout=self._timeout,
                transport=self._transport,
            )
        return self._http

    async def aclose(self) -> None:
        if self._http is not None:
            await self._http.aclose()

    def secret_values(self) -> Sequence[str]:
        return [self._credential]

    async def predict(self, model_id: str, messages: list[dict[str, Any]],
                      on_delta: OnDelta | None = None) -> dict[str, Any]:
        path = f"models/{_seg(model_id)}/predict"
        if on_delta is None:
            return await self._call("POST", path, json={"messages": messages})
        # Streamed: the listener's `delta` events as they come, then `done` or `error`.
        request = self._client.build_request("POST", path, json={"messages": messages},
                                             headers={"Accept": STREAMED})
        response = await self._send(path, request, stream=True)
        try:
            if response.status_code >= 400 or not _is_event_stream(response):
                await response.aread()
                return await self._answer(path, response)
            return await _read_events(path, response, on_delta)
        except httpx.HTTPError as exc:  # the listener went away mid-answer
            raise ResourceError("resource_unavailable",
                                f"{path}: the gateway cut the answer short "
                                f"({type(exc).__name__})") from None
        finally:
            await response.aclose()

    async def invoke_function(self, name: str, input: Any) -> dict[str, Any]:
        return await self._call("POST", f"functions/{_seg(name)}/invoke", json={"input": input})

    async def invoke_connection(
        self, connection_id: str, method: str, path: str, body: Any
    ) -> dict[str, Any]:
        return await self._call(
            "POST", f"agent-api-connections/{_seg(connection_id)}/invoke",
            json={"method": method, "path": path, "body": body},
        )

    async def search_knowledge(
        self, knowledge_base_id: str, query: str, limit: int
    ) -> dict[str, Any]:
        return await self._call("POST", f"knowledge-bases/{_seg(knowledge_base_id)}/search",
                                json={"query": query, "limit": limit})

    async def read_object(self, dataset_id: str, key: str) -> dict[str, Any]:
        return await self._call("GET", f"datasets/{_seg(dataset_id)}/object",
                                params={"key": key})

    async def create_approval(
        self, node_id: str, message: str, preview: str, timeout_seconds: int
    ) -> dict[str, Any]:
        return await self._call("POST", "agent-approvals", json={
            "node_id": node_id, "message": message, "preview": preview,
            "timeout_seconds": timeout_seconds,
        })

    async def get_approval(self, approval_id: str, wait: float = 0.0) -> dict[str, Any]:
        # A long poll answers within the client's timeout, with room for the request.
        wait = max(0.0, min(wait, self._timeout - LONG_POLL_MARGIN_SECONDS))
        params = {"wait": f"{wait:.3f}"} if wait > 0 else None
        return await self._call("GET", f"agent-approvals/{_seg(approval_id)}", params=params)

    async def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        request = self._client.build_request(method, path, **kwargs)
        return await self._answer(path, await self._send(path, request))

    async def _send(self, path: str, request: httpx.Request, *,
                    stream: bool = False) -> httpx.Response:
        """The listener's answer to request. A refused or reset connection to the
        listener itself (restarting, a keep-alive connection it closed) is tried again
        within the client's timeout (the node's timeout still ends the call first);
        an answer, whatever its status, is never sent again."""
        try:
            return await retrying_async(
                lambda: self._client.send(request, stream=stream),
                self._reconnect, f"{path}: the gateway cannot be reached")
        except httpx.HTTPError as exc:  # still refused, reset, timeouts
            raise ResourceError("resource_unavailable",
                                f"{path}: the gateway cannot be reached ({type(exc).__name__})"
                                ) from None

    async def _answer(self, path: str, response: httpx.Response) -> dict[str, Any]:
        if response.status_code >= 400:
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


def _is_event_stream(response: httpx.Response) -> bool:
    return "text/event-stream" in response.headers.get("content-type", "")


async def _read_events(path: str, response: httpx.Response,
                       on_delta: OnDelta) -> dict[str, Any]:
    """Server-Sent Events of a streamed predict: `delta` {"text"}, then `done` (the
    answer) or `error` (the error shape); an end without either is a cut answer."""
    event, data = "", ""
    async for line in response.aiter_lines():
        if line.startswith("event:"):
            event = line[6:].strip()
        elif line.startswith("data:"):
            data += line[5:].strip()
        elif not line and data:
            try:
                body = json.loads(data)
            except ValueError:
                raise ResourceError("node_error", f"{path}: a malformed event") from None
            if not isinstance(body, dict):
                raise ResourceError("node_error", f"{path}: a malformed event")
            if event == "delta" and isinstance(body.get("text"), str):
                await on_delta(body["text"])
            elif event == "done":
                return body
            elif event == "error":
                raise _event_failure(path, body)
            event, data = "", ""
    raise ResourceError("resource_unavailable", f"{path}: the gateway cut the answer short")


def _event_failure(path: str, body: dict[str, Any]) -> ResourceError:
    error = body.get("error")
    error = error if isinstance(error, dict) else {}
    code = error.get("code")
    message = error.get("message")
    message = message if isinstance(message, str) else "failed"
    # The same codes an error answer would give (the contract's mapping, by code).
    known = code if code in ("resource_denied", "resource_unavailable") else "node_error"
    return ResourceError(known, f"{path}: {message[:500]}")


def _seg(value: str) -> str:
    return quote(value, safe="")


def _failure(path: str, response: httpx.Response) -> ResourceError:
    message = _message(response) or f"HTTP {response.status_code}"
    return ResourceError(http_failure_code(response.status_code), f"{path}: {message}")


def _error(response: httpx.Response) -> dict[str, Any]:
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return {}
    return error if isinstance(error, dict) else {}


def _message(response: httpx.Response) -> str:
    message = _error(response).get("message")
    return message[:500] if isinstance(message, str) else ""
