"""Compiling a normalized graph once per run: adjacency, port types, conversions and
how each node runs.

Everything the scheduler needs per node and per edge is looked up here, once, so the
hot loop does dictionary reads only, and it branches on the flags computed here from
the registry, never on a node's kind. A graph the validator would reject (unknown
kind or port, incompatible types, a cycle) raises InvalidGraph naming the node at
fault: incompatible values never reach a component.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

from contracts.conversions import target_type
from contracts.registry import COMPONENTS, Component
from contracts.types import PortType
from runner.components import IMPLEMENTATIONS, AsyncComponent, PureComponent


class InvalidGraph(ValueError):
    def __init__(self, message: str, node_id: str | None = None) -> None:
        super().__init__(message)
        self.node_id = node_id


@dataclass(slots=True)
class Edge:
    index: int
    source: str
    port: str
    target: str
    src_type: PortType
    dst_type: PortType


@dataclass(slots=True)
class NodeSpec:
    id: str
    kind: str
    config: dict[str, str]
    comp: Component
    port_types: dict[str, PortType]
    # Exactly one of these: pure kinds run inline, the others as tasks.
    inline: PureComponent | None
    task: AsyncComponent | None
    # Runs only when every inbound edge carried a value (join with require: all).
    needs_all_inputs: bool = False
    # Skipped, not run on empty text, when it has no inbound edge (approval).
    needs_value: bool = False
    is_output: bool = False  # its value is the run's output (it fires no port)
    inbound: list[Edge] = field(default_factory=list)
    outbound: dict[str, list[Edge]] = field(default_factory=dict)

    @property
    def error_wired(self) -> bool:
        return bool(self.outbound.get("error"))


@dataclass(slots=True)
class Plan:
    nodes: dict[str, NodeSpec]
    edges: list[Edge]
    input_id: str
    output_id: str
    settings: dict[str, int]
    roots: list[str]  # nodes without inbound edges, in id order
    side_effects: frozenset[str]  # nodes whose kind has side effects (tool, api)


def compile_graph(graph: dict[str, Any]) -> Plan:
    nodes: dict[str, NodeSpec] = {}
    for raw in graph.get("nodes") or []:
        node_id, kind = raw.get("id"), raw.get("kind")
        comp = COMPONENTS.get(kind) if isinstance(kind, str) else None
        if not isinstance(node_id, str) or comp is None:
            raise InvalidGraph(f"node {node_id!r} has unknown kind {kind!r}", _str(node_id))
        if node_id in nodes:
            raise InvalidGraph(f"node id {node_id!r} is used twice", node_id)
        config = {k: v if isinstance(v, str) else str(v)
                  for k, v in (raw.get("config") or {}).items()}
        nodes[node_id] = _spec(node_id, kind, comp, config)
    # The registry's shapes say which node is which: the input kind takes nothing in,
    # the output kind sends nothing on.
    input_id = _only(nodes, "input", lambda comp: not comp.inputs)
    output_id = _only(nodes, "output", lambda comp: not comp.outputs)
    nodes[output_id].is_output = True
    edges = [_edge(i, raw, nodes) for i, raw in enumerate(graph.get("edges") or [])]
    for edge in edges:
        nodes[edge.target].inbound.append(edge)
        nodes[edge.source].outbound.setdefault(edge.port, []).append(edge)
    for spec in nodes.values():
        # Deterministic regardless of array order: inbound values are considered by
        # source id (then port) wherever several arrive.
        spec.inbound.sort(key=lambda e: (e.source, e.port))
    _check_acyclic(nodes)
    settings = {k: int(v) for k, v in (graph.get("settings") or {}).items() if _is_int(v)}
    roots = sorted(n for n, spec in nodes.items() if not spec.inbound)
    side_effects = frozenset(n for n, spec in nodes.items() if spec.comp.side_effects)
    return Plan(nodes, edges, input_id, output_id, settings, roots, side_effects)


def _spec(node_id: str, kind: str, comp: Component, config: dict[str, str]) -> NodeSpec:
    implementation = IMPLEMENTATIONS.get(kind)
    if implementation is None:
        raise InvalidGraph(f"this runner cannot run {kind!r} nodes", node_id)
    inline = cast(PureComponent, implementation) if comp.pure else None
    task = None if comp.pure else cast(AsyncComponent, implementation)
    # {output port: its type}, looked up per edge and per completion.
    port_types = {p.name: p.types[0] for p in comp.outputs}
    return NodeSpec(node_id, kind, config, comp, port_types, inline, task,
                    _needs_all_inputs(comp, config), comp.needs_value)


def _needs_all_inputs(comp: Component, config: dict[str, str]) -> bool:
    if comp.all_inputs_when is None:
        return False
    name, value = comp.all_inputs_when
    setting = comp.setting(name)
    return (config.get(name) or (setting.default if setting else None)) == value


def _edge(index: int, raw: dict[str, Any], nodes: dict[str, NodeSpec]) -> Edge:
    src, dst = nodes.get(raw.get("from", "")), nodes.get(raw.get("to", ""))
    if src is None or dst is None:
        raise InvalidGraph(f"edge {index} connects a node that does not exist")
    port = raw.get("from_port") or src.comp.default_output or ""
    src_type = src.port_types.get(port)
    if src_type is None:
        raise InvalidGraph(f"{src.id} has no output port {port!r}", src.id)
    to_port = raw.get("to_port") or dst.comp.default_input
    if not dst.comp.inputs or to_port != dst.comp.default_input:
        raise InvalidGraph(f"{dst.id} has no input port {to_port!r}", dst.id)
    dst_type = target_type(src_type, dst.comp.input_types)
    if dst_type is None:
        raise InvalidGraph(
            f"{dst.id} ({dst.kind}) does not accept {src_type} from {src.id}.{port}", dst.id
        )
    return Edge(index, src.id, port, dst.id, src_type, dst_type)


def _only(nodes: dict[str, NodeSpec], role: str, test: Callable[[Component], bool]) -> str:
    found = sorted(n for n, spec in nodes.items() if test(spec.comp))
    if len(found) != 1:
        raise InvalidGraph(f"a graph needs exactly one {role} node, this one has {len(found)}")
    return found[0]


def _check_acyclic(nodes: dict[str, NodeSpec]) -> None:
    indegree = {n: len(spec.inbound) for n, spec in nodes.items()}
    ready = [n for n, d in indegree.items() if d == 0]
    seen = 0
    while ready:
        node = ready.pop()
        seen += 1
        for edges in nodes[node].outbound.values():
            for edge in edges:
                indegree[edge.target] -= 1
                if indegree[edge.target] == 0:
                    ready.append(edge.target)
    if seen != len(nodes):
        stuck = sorted(n for n, d in indegree.items() if d > 0)
        raise InvalidGraph("the graph has a cycle", stuck[0])


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None
