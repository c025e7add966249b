"""condition, router, join, extract and memory: pure functions of the incoming value."""

from __future__ import annotations

from typing import Any

from contracts.conditions import ConditionError, parse_condition
from contracts.conversions import text_to_chat, text_to_json, to_text
from contracts.types import PortType
from runner.components import implements
from runner.context import NodeContext, NodeOutput
from runner.failures import NodeFailure

ROUTES = ("route_1", "route_2", "route_3", "route_4")


def check(expression: str, text: str, where: str) -> bool:
    try:
        return parse_condition(expression)(text)
    except ConditionError as exc:
        raise NodeFailure("node_error", f"{where}: {exc}") from None


@implements("condition")
def run_condition(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    text = to_text(value, vtype)
    port = "true" if check(ctx.required("expression"), text, "expression") else "false"
    return NodeOutput(port, text)


@implements("router")
def run_router(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    """Routes are checked in order; the first true one fires, else `default`. One port only."""
    text = to_text(value, vtype)
    for route in ROUTES:
        expression = ctx.config.get(route, "")
        if expression.strip() and check(expression, text, route):
            return NodeOutput(route, text)
    return NodeOutput("default", text)


@implements("join")
def run_join(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    """Merge inbound values into one JSON object keyed by source node id.

    `require: all` is enforced by the scheduler (the node is skipped unless every
    inbound edge carried a value); here every value present is merged.
    """
    merged: dict[str, Any] = {}
    for source, item, _type in ctx.inputs:
        merged.setdefault(source, item)
    return NodeOutput("out", merged)


@implements("extract")
def run_extract(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    """Pick a value by a dotted path (`items.0.name`); `missing`: fail or empty (null)."""
    path = ctx.required("path").strip()
    current = text_to_json(value) if vtype == "text" else value
    for part in path.split("."):
        found, current = _step(current, part)
        if not found:
            if ctx.setting("missing") == "empty":
                return NodeOutput("out", None)
            raise NodeFailure("node_error", f"path {path!r} not found (at {part!r})")
    return NodeOutput("out", current)


def _step(current: Any, part: str) -> tuple[bool, Any]:
    if isinstance(current, dict):
        return (True, current[part]) if part in current else (False, None)
    if isinstance(current, list) and _is_index(part):
        index = int(part)
        return (True, current[index]) if index < len(current) else (False, None)
    return False, None


def _is_index(part: str) -> bool:
    return part.isdigit() and part.isascii()


@implements("memory")
def run_memory(ctx: NodeContext, value: Any, vtype: PortType) -> NodeOutput:
    """The last N turns of the run's history, then the incoming turn(s).

    A turn is one history message; the gateway resolves `session_id` into `history`
    before the run starts. `none` passes only the incoming value as chat.
    """
    incoming = value if vtype == "chat" else text_to_chat(to_text(value, vtype))
    if ctx.setting("strategy") == "none":
        return NodeOutput("out", list(incoming))
    turns = ctx.int_setting("turns")
    history = [t for t in ctx.run.request.history if isinstance(t, dict)]
    return NodeOutput("out", history[-turns:] + list(incoming))
