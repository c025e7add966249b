"""tool, api, knowledge and storage: calls through the run's ResourceClient.

tool and api have side effects (registry): the scheduler runs them only when the run
allows them, otherwise they fail with side_effects_not_allowed (their error port
applies) without being called.
"""

from __future__ import annotations

from typing import Any

from contracts.conversions import to_text
from contracts.types import PortType
from runner.components import implements
from runner.components.prompt import substitute
from runner.context import NodeContext, NodeOutput
from runner.failures import NodeFailure

_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"})


@implements("tool")
async def run_tool(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    answer = await ctx.run.resources.invoke_function(ctx.required("tool").strip(), value)
    return NodeOutput("out", answer.get("output"))


def parse_request(spec: str) -> tuple[str, str]:
    """`METHOD /path` (default POST /)."""
    parts = spec.split(None, 1)
    method = parts[0].upper() if parts else "POST"
    path = parts[1].strip() if len(parts) > 1 else "/"
    if method not in _METHODS or not path.startswith("/"):
        raise NodeFailure("node_error", f"request must look like 'POST /path', not {spec!r}")
    return method, path


@implements("api")
async def run_api(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    method, path = parse_request(ctx.setting("request"))
    connection = ctx.required("connection").strip()
    answer = await ctx.run.resources.invoke_connection(connection, method, path, value)
    status = answer.get("status", 200)
    if isinstance(status, int) and status >= 400:
        raise NodeFailure("node_error", f"{method} {path} answered {status}")
    return NodeOutput("out", answer.get("body"))


@implements("knowledge")
async def run_knowledge(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    query = substitute(ctx.setting("query"), to_text(value, vtype))
    limit = ctx.int_setting("limit")
    answer = await ctx.run.resources.search_knowledge(
        ctx.required("knowledge_base").strip(), query, limit
    )
    documents = answer.get("documents")
    if not isinstance(documents, list):
        raise NodeFailure("node_error", "the knowledge base answered without documents")
    return NodeOutput("out", [_document(d) for d in documents[:limit]])


@implements("storage")
async def run_storage(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    dataset = ctx.setting("dataset").strip()
    if not dataset:
        # The dataset is optional (reference); without one there is nothing to read
        # (the validator warns: missing_optional_config).
        return NodeOutput("out", [])
    # The input is optional: unconnected, the key template sees an empty {input}.
    key = substitute(ctx.setting("key"), to_text(value, vtype))
    answer = await ctx.run.resources.read_object(dataset, key)
    content = answer.get("text")
    if not isinstance(content, str):
        raise NodeFailure("node_error", f"object {key!r} has no text")
    return NodeOutput("out", [{"text": content, "key": answer.get("key", key)}])


def _document(doc: Any) -> dict[str, Any]:
    if isinstance(doc, dict) and isinstance(doc.get("text"), str):
        return doc
    return {"text": doc if isinstance(doc, str) else str(doc)}
