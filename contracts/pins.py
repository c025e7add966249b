"""Pinned outputs: a designer's fixed value for one node's output port, which design-time
runs repeat instead of running the node.

Pure functions: whether a value fits the port it is pinned on (typed by the port, within
the record limit), and which of a design's pins a graph can take (the gateway's
designs/pins.py stores them, runs/start.py hands them to the runner as `reuse`).
"""

from __future__ import annotations

from typing import Any, Final

from contracts.hashing import canonical_json
from contracts.registry import COMPONENTS, LIMITS
from contracts.text import storable
from contracts.types import PortType

# A pin is repeated like a record: at most a run output's 64 KiB of JSON.
PIN_BYTES: Final = LIMITS["output_bytes"]


def pin_port_type(graph: dict[str, Any], node_id: str, port: str) -> PortType | None:
    """The type of `port` on node `node_id` of the normalized `graph`, or None when the
    graph has no such node or its kind no such output."""
    node = next((n for n in graph["nodes"] if n["id"] == node_id), None)
    component = None if node is None else COMPONENTS.get(node["kind"])
    found = None if component is None else component.output(port)
    return None if found is None else found.types[0]


def value_problem(value: Any, port_type: PortType) -> str | None:
    """Why `value` cannot travel on a port of `port_type`, or None when it can."""
    if not _fits(value, port_type):
        return f"A {port_type} value is {_SHAPES[port_type]}."
    if storable(value) is not value:
        return "A pinned value holds no U+0000, unpaired surrogate or non-finite number."
    if len(canonical_json(value).encode()) > PIN_BYTES:
        return f"A pinned value is at most {PIN_BYTES} bytes of JSON."
    return None


def pinned_reuse(graph: dict[str, Any], pins: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The runner's `reuse` entries for the pins ({node ID: {port, value}}) that still fit
    `graph`: the node is there and its kind has the port with the value's type. A pin
    the graph no longer fits is left out (the node runs)."""
    reuse: dict[str, Any] = {}
    for node_id, pin in pins.items():
        port_type = pin_port_type(graph, node_id, pin["port"])
        if port_type is not None and value_problem(pin["value"], port_type) is None:
            reuse[node_id] = {"port": pin["port"], "value": pin["value"], "from_run": None}
    return reuse


_SHAPES: Final[dict[str, str]] = {
    "text": "a string",
    "chat": "a list of turns, each an object with a string role and content",
    "json": "any JSON value",
    "documents": "a list of objects, each with a string text",
}


def _fits(value: Any, port_type: PortType) -> bool:
    if port_type == "text":
        return isinstance(value, str)
    if port_type == "chat":
        return isinstance(value, list) and all(
            isinstance(t, dict) and isinstance(t.get("role"), str)
            and isinstance(t.get("content"), str) for t in value)
    if port_type == "documents":
        return isinstance(value, list) and all(
            isinstance(d, dict) and isinstance(d.get("text"), str) for d in value)
    return True
