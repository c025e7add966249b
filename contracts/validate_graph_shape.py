"""Whole-graph checks: cycles, nodes without a path from the input, dead ends.

Only edges whose two ends exist take part. All walks are iterative, so a long chain
of nodes cannot exhaust Python's recursion limit.
"""

from __future__ import annotations

from typing import Final

from contracts.issues import Issue, error, quote, warning
from contracts.validate_edges import EdgeView
from contracts.validate_nodes import NodeView

Adjacency = dict[str, list[str]]
_MAX_NAMED: Final = 10


def check_graph_shape(
    nodes: dict[str, NodeView], edges: list[EdgeView], issues: list[Issue]
) -> None:
    forward: Adjacency = {node_id: [] for node_id in nodes}
    backward: Adjacency = {node_id: [] for node_id in nodes}
    for edge in edges:
        forward[edge.source].append(edge.target)
        backward[edge.target].append(edge.source)
    _check_cycles(nodes, forward, issues)
    _check_reachability(nodes, forward, backward, issues)


def _check_cycles(nodes: dict[str, NodeView], forward: Adjacency, issues: list[Issue]) -> None:
    """One `cycle` error per strongly connected group of nodes (or a self-loop)."""
    if is_acyclic(forward):
        return  # the usual case, and cheaper to establish than the groups
    groups = [
        sorted(group, key=lambda n: nodes[n].index)
        for group in strongly_connected(forward)
        if len(group) > 1 or group[0] in forward[group[0]]
    ]
    for group in sorted(groups, key=lambda g: nodes[g[0]].index):
        loop = shortest_cycle(group[0], set(group), forward)
        names = " → ".join(quote(n) for n in loop[:_MAX_NAMED])
        if len(loop) > _MAX_NAMED:
            names += f" → … ({len(loop) - 1} nodes)"
        others = [n for n in group if n not in loop]
        also = ""
        if others:
            shown = ", ".join(quote(n) for n in others[:_MAX_NAMED])
            more = f" and {len(others) - _MAX_NAMED} more" if len(others) > _MAX_NAMED else ""
            also = f" Also on cycles with them: {shown}{more}."
        issues.append(error(
            "cycle",
            f"These nodes form a cycle: {names}.{also} Graphs cannot loop back; a loop node "
            "repeats a published flow instead.",
        ))


def shortest_cycle(start: str, group: set[str], forward: Adjacency) -> list[str]:
    """The shortest walk start → … → start inside one strongly connected group."""
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in forward[node]:
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(parent[path[-1]])
                    return [start, *reversed(path[:-1]), start]
                if nxt in group and nxt not in parent:
                    parent[nxt] = node
                    following.append(nxt)
        frontier = following
    return [start]  # not reached: every group handed in has a cycle through start


def is_acyclic(graph: Adjacency) -> bool:
    """Kahn's algorithm: every node can be taken once all its predecessors are."""
    pending = dict.fromkeys(graph, 0)
    for successors in graph.values():
        for nxt in successors:
            pending[nxt] += 1
    ready = [n for n, count in pending.items() if count == 0]
    taken = 0
    while ready:
        taken += 1
        for nxt in graph[ready.pop()]:
            pending[nxt] -= 1
            if pending[nxt] == 0:
                ready.append(nxt)
    return taken == len(graph)


def strongly_connected(graph: Adjacency) -> list[list[str]]:
    """Tarjan's algorithm without recursion; returns the components."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            successors = graph[node]
            if child < len(successors):
                work.append((node, child + 1))
                nxt = successors[child]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:  # done with node: hand its low-link to the parent
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                groups.append(_pop_group(node, stack, on_stack))
    return groups


def _pop_group(root: str, stack: list[str], on_stack: set[str]) -> list[str]:
    group = []
    while True:
        member = stack.pop()
        on_stack.discard(member)
        group.append(member)
        if member == root:
            return group


def _check_reachability(
    nodes: dict[str, NodeView], forward: Adjacency, backward: Adjacency, issues: list[Issue]
) -> None:
    inputs = [n for n, v in nodes.items() if v.kind == "input"]
    outputs = [n for n, v in nodes.items() if v.kind == "output"]
    # Without an input (or output) every node would be flagged; missing_input
    # (missing_output) already says what is wrong.
    if inputs:
        # A node whose input is optional and unconnected (storage) runs on its own.
        roots = inputs + [
            n for n, v in nodes.items()
            if not backward[n] and v.component is not None and v.component.input_optional
        ]
        reached = _walk(roots, forward)
        # Nodes the input does not reach but that run anyway (no inbound edge: the
        # reference's rule), and everything they feed.
        fed = _walk([n for n, v in nodes.items() if n not in reached and not backward[n]
                     and v.component is not None and not v.component.needs_value], forward)
        for node_id, view in nodes.items():
            if node_id not in reached:
                issues.append(warning(
                    "unreachable_node",
                    f"No path leads from the input to {quote(node_id)}; "
                    f"{_fate(view, backward[node_id], node_id in fed)}.",
                    f"nodes.{view.index}",
                    node_id,
                ))
    if outputs:
        reaching = _walk(outputs, backward)
        for node_id, view in nodes.items():
            if node_id not in reaching:
                issues.append(warning(
                    "dead_end",
                    f"No path leads from {quote(node_id)} to the output; its result is unused.",
                    f"nodes.{view.index}",
                    node_id,
                ))


def _fate(view: NodeView, inbound: list[str], fed: bool) -> str:
    """What the runner does with a node the input does not reach, so the warning and the
    run agree (docs/decisions/approval-without-input-is-skipped.md)."""
    if view.component is None:
        return "it never receives a value"
    if not inbound and view.component.needs_value:
        return (f"it never receives a value, so it is skipped at every run ({view.kind} "
                "nodes do not run without one)")
    if not inbound:
        return ("it never receives a value, so it runs at the start of every run on empty "
                "text (a node without an inbound edge always runs)")
    if fed:
        return "it receives only what nodes without an inbound edge send it"
    return "it never receives a value, so it is skipped at every run"


def _walk(starts: list[str], graph: Adjacency) -> set[str]:
    seen = set(starts)
    todo = list(starts)
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen
