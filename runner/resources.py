"""The one interface through which the engine reaches platform resources.

Production uses `HttpResources` (runner.http_resources): the gateway's internal
listener, authenticated with the run-scoped credential. Tests and the gateway's own
tests use `InMemoryResources` (runner.inmemory_resources). Both raise ResourceError.

HTTP contract (paths relative to the callback base URL, e.g.
http://gateway:8087/api/v1/; every request sends `Authorization: Bearer <run
credential>`; every body is JSON; IDs are URL-escaped path segments):

POST models/{id}/predict
    request  {"messages": [{"role": "system"|"user"|"assistant", "content": str}, ...]}
    response {"text": str, "usage": {"tokens": int, "cost"?: number}}   (usage optional;
             cost: what the gateway billed, kept in the node's record)
             or, with `Accept: text/event-stream`, Server-Sent Events: `delta`
             {"text": piece} as the model writes, then `done` (the answer above) or
             `error` (the error body below; e.g. the model cut its answer short)
POST functions/{name}/invoke
    request  {"input": <JSON value, or a string for text input>}
    response {"output": <JSON value>}
POST agent-api-connections/{id}/invoke
    request  {"method": "GET"|"POST"|..., "path": "/tickets", "body": <JSON value | str>}
    response {"status": int, "body": <JSON value>}   (the upstream API's answer;
             status ≥ 400 fails the node with node_error)
POST knowledge-bases/{id}/search
    request  {"query": str, "limit": int (1-20)}
    response {"documents": [{"text": str, "id"?: str, "score"?: float,
                             "metadata"?: object}, ...]}
GET  datasets/{id}/object?key=<key>
    response {"key": str, "text": str, "content_type"?: str}
POST agent-approvals
    request  {"node_id": str, "message": str, "preview": str (redacted, ≤ 2,000),
              "timeout_seconds": int (10-290)}
             (the run is the one the credential belongs to)
    response {"id": str, "status": "pending", "expires_at"?: str}
GET  agent-approvals/{id}
    response {"id": str, "status": "pending"|"approved"|"rejected"|"expired"|"cancelled",
              "comment": str | null}

Errors (the gateway's usual {"error": {"code", "message"}} body): 401, 403 and 404
→ resource_denied (missing and other-project resources look the same); 429, 5xx,
connection errors and timeouts → resource_unavailable (retried where the component
retries); any other 4xx → node_error. Except 401 `run_cancelled`: the run's cancel was
requested, which the runner learns from Redis in a moment; the call then waits to be
cancelled with its run, so a cancelled run ends `run.cancelled`, not failed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final, Protocol, runtime_checkable

from runner.failures import NodeFailure

if TYPE_CHECKING:
    from runner.backends import OnDelta
    from runner.http_resources import HttpResources
    from runner.inmemory_resources import InMemoryResources

__all__ = ["RUN_CANCELLED", "HttpResources", "InMemoryResources", "ResourceClient",
           "ResourceError"]

# The gateway's error code for a call of a run whose cancel was requested.
RUN_CANCELLED: Final = "run_cancelled"


class ResourceError(NodeFailure):
    """A resource call failed: code is resource_denied, resource_unavailable or node_error."""


@runtime_checkable
class ResourceClient(Protocol):
    async def predict(self, model_id: str, messages: list[dict[str, Any]],
                      on_delta: OnDelta | None = None) -> dict[str, Any]:
        """POST models/{id}/predict → {"text", "usage"?: {"tokens"}}; with on_delta,
        streamed: on_delta gets each piece of text as the model writes it."""
        ...

    async def invoke_function(self, name: str, input: Any) -> dict[str, Any]:
        """POST functions/{name}/invoke → {"output"}."""
        ...

    async def invoke_connection(
        self, connection_id: str, method: str, path: str, body: Any
    ) -> dict[str, Any]:
        """POST agent-api-connections/{id}/invoke → {"status", "body"}."""
        ...

    async def search_knowledge(
        self, knowledge_base_id: str, query: str, limit: int
    ) -> dict[str, Any]:
        """POST knowledge-bases/{id}/search → {"documents": [...]}."""
        ...

    async def read_object(self, dataset_id: str, key: str) -> dict[str, Any]:
        """GET datasets/{id}/object?key= → {"key", "text", "content_type"?}."""
        ...

    async def create_approval(
        self, node_id: str, message: str, preview: str, timeout_seconds: int
    ) -> dict[str, Any]:
        """POST agent-approvals → {"id", "status": "pending"}."""
        ...

    async def get_approval(self, approval_id: str, wait: float = 0.0) -> dict[str, Any]:
        """GET agent-approvals/{id}?wait= → {"id", "status", "comment"}: a pending
        request's answer waits up to `wait` s for its decision (a long poll)."""
        ...

    def secret_values(self) -> Sequence[str]:
        """Values the engine must redact from every event (e.g. the run credential)."""
        ...


def __getattr__(name: str) -> Any:
    # Lazy re-exports: importing the protocol must not pull in httpx.
    if name == "HttpResources":
        from runner.http_resources import HttpResources

        return HttpResources
    if name == "InMemoryResources":
        from runner.inmemory_resources import InMemoryResources

        return InMemoryResources
    raise AttributeError(name)
