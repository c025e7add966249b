"""An in-memory ResourceClient for tests (the engine's and the gateway's).

Resources are plain data or callables; unknown IDs are `resource_denied` (as the
gateway answers for missing and other-project IDs alike). `fail_next` queues
failures for a path, `calls` records every call, approvals are decided with
`decide()` / `expire()` or automatically with `auto_decision`.
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import re
from collections.abc import Callable, Sequence
from typing import Any

from runner.backends import OnDelta
from runner.resources import ResourceError

Handler = Callable[..., Any]


class InMemoryResources:
    def __init__(
        self,
        *,
        models: dict[str, str | Handler] | None = None,
        functions: dict[str, Any] | None = None,
        connections: dict[str, Any] | None = None,
        knowledge: dict[str, list[dict[str, Any]]] | None = None,
        datasets: dict[str, dict[str, str]] | None = None,
        auto_decision: tuple[str, str] | None = None,
        secrets: Sequence[str] = (),
        latency: float = 0.0,
    ) -> None:
        self.models = models or {}
        self.functions = functions or {}  # name -> JSON value or callable(input)
        self.connections = connections or {}  # id -> body or callable(method, path, body)
        self.knowledge = knowledge or {}
        self.datasets = datasets or {}
        self.auto_decision = auto_decision  # ("approve"|"reject", comment)
        self.secrets = list(secrets)
        self.latency = latency
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.approvals: dict[str, dict[str, Any]] = {}
        self._failures: dict[str, list[ResourceError]] = {}
        self._ids = itertools.count(1)

    # Test controls

    def fail_next(self, path: str, code: str, message: str = "", times: int = 1) -> None:
        """Make the next `times` calls to `path` (e.g. "functions/lookup/invoke") fail."""
        error = ResourceError(code, message or f"{path} failed ({code})")
        self._failures.setdefault(path, []).extend([error] * times)

    def decide(self, approval_id: str, decision: str, comment: str = "") -> None:
        status = {"approve": "approved", "reject": "rejected"}[decision]
        self.approvals[approval_id].update(status=status, comment=comment)

    def expire(self, approval_id: str) -> None:
        self.approvals[approval_id]["status"] = "expired"

    def secret_values(self) -> Sequence[str]:
        return self.secrets

    # ResourceClient

    async def predict(self, model_id: str, messages: list[dict[str, Any]],
                      on_delta: OnDelta | None = None) -> dict[str, Any]:
        handler = await self._enter(f"models/{model_id}/predict", {"messages": messages},
                                    self.models, model_id)
        text = await _call(handler, messages) if callable(handler) else str(handler)
        if on_delta is not None and text:
            await on_delta(text)  # one piece: the whole answer
        words = sum(len(str(m.get("content", "")).split()) for m in messages)
        return {"text": text, "usage": {"tokens": words + len(text.split())}}

    async def invoke_function(self, name: str, input: Any) -> dict[str, Any]:
        handler = await self._enter(f"functions/{name}/invoke", {"input": input},
                                    self.functions, name)
        return {"output": await _call(handler, input) if callable(handler) else handler}

    async def invoke_connection(
        self, connection_id: str, method: str, path: str, body: Any
    ) -> dict[str, Any]:
        handler = await self._enter(
            f"agent-api-connections/{connection_id}/invoke",
            {"method": method, "path": path, "body": body}, self.connections, connection_id,
        )
        if callable(handler):
            answer = await _call(handler, method, path, body)
            if isinstance(answer, tuple):
                return {"status": answer[0], "body": answer[1]}
            return {"status": 200, "body": answer}
        return {"status": 200, "body": handler}

    async def search_knowledge(
        self, knowledge_base_id: str, query: str, limit: int
    ) -> dict[str, Any]:
        docs = await self._enter(f"knowledge-bases/{knowledge_base_id}/search",
                                 {"query": query, "limit": limit}, self.knowledge,
                                 knowledge_base_id)
        words = _words(query)

        def score(doc: dict[str, Any]) -> int:
            return len(words & _words(str(doc.get("text", ""))))

        ranked = sorted(docs, key=score, reverse=True)  # stable: ties keep stored order
        return {"documents": [dict(d, score=score(d)) for d in ranked[:limit]]}

    async def read_object(self, dataset_id: str, key: str) -> dict[str, Any]:
        objects = await self._enter(f"datasets/{dataset_id}/object", {"key": key},
                                    self.datasets, dataset_id)
        if key not in objects:
            raise ResourceError("resource_denied", f"no object {key!r} in dataset {dataset_id}")
        return {"key": key, "text": objects[key]}

    async def create_approval(
        self, node_id: str, message: str, preview: str, timeout_seconds: int
    ) -> dict[str, Any]:
        body = {"node_id": node_id, "message": message, "preview": preview,
                "timeout_seconds": timeout_seconds}
        await self._enter("agent-approvals", body)
        approval_id = f"apr-{next(self._ids)}"
        self.approvals[approval_id] = dict(body, id=approval_id, status="pending", comment=None)
        if self.auto_decision is not None:
            self.decide(approval_id, *self.auto_decision)
        return {"id": approval_id, "status": "pending"}

    async def get_approval(self, approval_id: str, wait: float = 0.0) -> dict[str, Any]:
        # Answers at once: the node's pause between polls stands in for the wait.
        await self._enter(f"agent-approvals/{approval_id}", {})
        found = self.approvals.get(approval_id)
        if found is None:
            raise ResourceError("resource_denied", f"no approval {approval_id}")
        return {k: found[k] for k in ("id", "status", "comment")}

    async def _enter(self, path: str, body: dict[str, Any],
                     table: dict[str, Any] | None = None, key: str = "") -> Any:
        self.calls.append((path, body))
        if self.latency:
            await asyncio.sleep(self.latency)
        else:
            await asyncio.sleep(0)  # a real call always yields; so does this one
        queued = self._failures.get(path)
        if queued:
            raise queued.pop(0)
        if table is None:
            return None
        if key not in table:
            raise ResourceError("resource_denied", f"{path}: not found or not allowed")
        return table[key]


async def _call(handler: Handler, *args: Any) -> Any:
    # A handler that raises answers like the gateway does for a failing resource.
    try:
        result = handler(*args)
        return await result if inspect.isawaitable(result) else result
    except ResourceError:
        raise
    except Exception as exc:
        raise ResourceError("node_error", f"{type(exc).__name__}: {exc}") from None


def _words(text: str) -> set[str]:
    return set(re.findall(r"\w+", text.casefold()))
