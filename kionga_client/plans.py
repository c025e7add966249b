"""What a run of a graph would do, read from the graph and the component registry: its
steps in run order and the side effects it would have; and the refusal of a graph that
cannot run (the same for `validate` and for a run's plan)."""

from __future__ import annotations

from typing import Any

from kionga_client.errors import KiongaError
from kionga_client.gateway import graph_issue_code


def graph_plan(graph: dict[str, Any], reg: dict[str, Any]) -> dict[str, Any]:
    """The steps of a graph in run order (by edges, ties by position) and its side effects."""
    kinds = {c["kind"]: c for c in reg.get("components", [])}
    nodes = {n["id"]: n for n in graph.get("nodes", [])}
    incoming: dict[str, int] = {i: 0 for i in nodes}
    for edge in graph.get("edges", []):
        if edge.get("to") in incoming:
            incoming[edge["to"]] += 1
    order, ready = [], [i for i in nodes if incoming[i] == 0]
    while ready:
        node_id = ready.pop(0)
        order.append(node_id)
        for edge in graph.get("edges", []):
            if edge.get("from") == node_id and edge.get("to") in incoming:
                incoming[edge["to"]] -= 1
                if incoming[edge["to"]] == 0:
                    ready.append(edge["to"])
    order += [i for i in nodes if i not in order]  # cycles (loops are nodes, not cycles)
    steps = []
    for node_id in order:
        node = nodes[node_id]
        meta = kinds.get(node.get("kind", ""), {})
        steps.append({"node_id": node_id, "kind": node.get("kind"),
                      "name": node.get("name") or meta.get("label") or node_id,
                      "side_effects": bool(meta.get("side_effects"))})
    effects = [{"node_id": s["node_id"], "kind": s["kind"],
                "what": _effect(nodes[s["node_id"]])} for s in steps if s["side_effects"]]
    return {"steps": steps, "side_effects": effects}


def _effect(node: dict[str, Any]) -> str:
    config = node.get("config") or {}
    target = config.get("tool") or config.get("connection") or config.get("function") or "?"
    return f"{node.get('kind')} node {node['id']} calls {target}"


def side_effect_warnings(plan: dict[str, Any]) -> list[dict[str, str]]:
    return [{"code": "side_effects", "message": e["what"]} for e in plan["side_effects"]]


def check_plan(plan: dict[str, Any]) -> None:
    check_runnable(plan["runnable"], plan["issues"], plan)


def check_runnable(runnable: bool, issues: list[dict[str, Any]], data: Any) -> None:
    """Refuse a graph that cannot run: the code of its errors, the first one's message and
    where it is, with `data` (the report or the plan) in the error."""
    if not runnable:
        errors = [i for i in issues if i.get("severity") == "error"]
        first = errors[0] if errors else {"message": "The graph is not runnable."}
        raise KiongaError(graph_issue_code(errors), f"{len(errors)} error(s): {first['message']}",
                          where=_issue_where(first), data=data)


def _issue_where(issue: dict[str, Any]) -> dict[str, Any] | None:
    where = {k: issue[k] for k in ("node_id", "edge", "path") if issue.get(k) is not None}
    return where or None
