"""HttpResources: the ResourceClient of production, over the gateway's internal listener.

See runner.resources for the request and response JSON of every call.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

import httpx

from runner.failures import http_failure_code
from runner.resources import RUN_CANCELLED, ResourceError


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

    async def predict(self, model_id: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        return await self._call("POST", f"models/{_seg(model_id)}/predict",
                                json={"messages": messages})

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

    async def get_approval(self, approval_id: str) -> dict[str, Any]:
        return await self._call("GET", f"agent-approvals/{_seg(approval_id)}")

    async def _call(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            response = await self._client.request(method, path, **kwargs)
        except httpx.HTTPError as exc:  # connection refused, reset, timeouts
            raise ResourceError("resource_unavailable",
                                f"{path}: the gateway cannot be reached ({type(exc).__name__})"
                                ) from None
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
