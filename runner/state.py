"""Per-run state of the scheduler: which inbound edges resolved, and with what value.

Each inbound edge resolves exactly once, either carrying a value (already converted
to the type the target accepts) or empty (its producer was skipped, fired another
port, or failed into its error port). A node is decided when all its inbound edges
have resolved.
"""

from __future__ import annotations

from typing import Any

from contracts.conversions import convert
from contracts.types import PortType
from runner.plan import Edge, NodeSpec, Plan

Arrival = tuple[str, str, Any, PortType]  # (source id, source port, value, type)


class RunState:
    __slots__ = ("remaining", "arrivals", "output", "output_seen")

    def __init__(self, plan: Plan) -> None:
        self.remaining = {n: len(spec.inbound) for n, spec in plan.nodes.items()}
        self.arrivals: dict[str, list[Arrival]] = {}
        self.output: str | None = None
        self.output_seen = False

    def fire(self, spec: NodeSpec, port: str | None, value: Any, ready: list[str]) -> None:
        """Resolve every outbound edge of `spec`: those of `port` carry `value`.

        Targets whose last inbound edge resolved are appended to `ready`.
        """
        remaining, arrivals = self.remaining, self.arrivals
        for edge_port, edges in spec.outbound.items():
            carried = edge_port == port
            for edge in edges:
                if carried:
                    converted = _convert(value, edge)
                    arrivals.setdefault(edge.target, []).append(
                        (edge.source, edge.port, converted, edge.dst_type)
                    )
                left = remaining[edge.target] - 1
                remaining[edge.target] = left
                if left == 0:
                    ready.append(edge.target)

    def inputs(self, node_id: str) -> list[Arrival]:
        """The values that arrived, ordered by source id then port (never by array order)."""
        found = self.arrivals.get(node_id)
        if not found:
            return []
        if len(found) > 1:
            found.sort(key=lambda a: (a[0], a[1]))
        return found


def _convert(value: Any, edge: Edge) -> Any:
    if edge.src_type == edge.dst_type:
        return value
    return convert(value, edge.src_type, edge.dst_type)
