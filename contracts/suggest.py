"""Suggested test cases: one per distinct input→output path of a graph (pure logic).

validation-and-suggestions.md, Suggested test cases. A path is a chain of edges from
the input node to the output node; two paths differ when their edges (ports included)
differ, so a condition's true and false branches are two paths even when they meet
the same node. Ports no input text can choose (a failure's `error` port, a loop's
`exhausted`, an approval's `rejected`) are not followed: a case cannot provoke them.

Each path's input text is built so that every condition and router on it sends the
text down the path's port: the literals below are collected (a router's route_k also
needs route_1..route_k-1 false; its `default` needs every route false), a text is
built from them and then checked with the real condition grammar, so a proposal never
claims a text that does not satisfy them. When none can be built (an underivable
`matches`, contradicting conditions, a length past the input limit) the case keeps a
neutral text and says why in `note`. Conditions see the text of the node before them;
when that is not the input (a prompt or model in between), the text is built for the
input and the case says so too.
"""

from __future__ import annotations

import heapq
import importlib
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Final

from contracts.conditions import ConditionError, parse_condition

MAX_SUGGESTIONS: Final = 12
# Partial paths the search may look at; graphs with more paths than this get fewer
# proposals rather than an unbounded search (a 100-node graph can have 2^50 paths).
MAX_PARTIAL_PATHS: Final = 20_000
# The longest input a suggestion builds (longer_than:N needs N+1 characters).
MAX_SUGGESTED_INPUT: Final = 10_000
MAX_CASE_NAME: Final = 200
ROUTES: Final = ("route_1", "route_2", "route_3", "route_4")
# Ports an input text cannot choose.
UNCHOSEN_PORTS: Final = frozenset({"error", "exhausted", "rejected"})
# Neutral texts tried, in order, when no condition asks for anything in particular.
FILLERS: Final = ("sample question", "test input 42", "q", "zz 7", "neutral")
PADDING: Final = ("x", "z", "-", "q", "7")


@dataclass(frozen=True)
class Hop:
    """One edge of a path: from `node` out of `port` to `to`."""

    node: str
    port: str
    to: str


@dataclass(frozen=True)
class Need:
    """The text a condition sees must (holds=True) or must not satisfy `expression`."""

    expression: str
    holds: bool
    node: str


@dataclass
class Suggestion:
    name: str
    input: str
    calls: list[str]
    path: list[Hop]
    notes: list[str] = field(default_factory=list)

    def to_case(self) -> dict[str, Any]:
        """The proposal in the fixtures' case shape (without an id: saving assigns one)."""
        return {
            "name": self.name,
            "input": self.input,
            "tags": ["suggested"],
            "expected": {"calls": list(self.calls)},
            "path": [{"from": h.node, "port": h.port, "to": h.to} for h in self.path],
            "note": "; ".join(self.notes) or None,
        }


def suggest_cases(graph: dict[str, Any], limit: int = MAX_SUGGESTIONS) -> list[Suggestion]:
    """Proposals for a normalized graph (contracts.normalize), shortest paths first."""
    nodes = {n["id"]: n for n in graph.get("nodes", []) if isinstance(n, dict)}
    start = _only(nodes, "input")
    end = _only(nodes, "output")
    if start is None or end is None:
        return []
    suggestions: list[Suggestion] = []
    taken: set[str] = set()
    for path in shortest_paths(graph, start, end, limit):
        suggestion = _suggestion(nodes, path, taken)
        taken.add(suggestion.name)
        suggestions.append(suggestion)
    return suggestions


def shortest_paths(graph: dict[str, Any], start: str, end: str,
                   limit: int = MAX_SUGGESTIONS) -> Iterator[list[Hop]]:
    """Up to `limit` distinct paths start→end, by length then by edge order (stable).

    A best-first search ranked by (hops so far + the fewest hops left to `end`): that
    estimate is exact, so paths come out shortest first, and each one is reached by
    extending one partial path after another rather than by a breadth-first sweep
    (which would hold 2^k partial paths of a graph of k diamonds).
    """
    outgoing: dict[str, list[Hop]] = {}
    for edge in graph.get("edges", []):
        port = edge.get("from_port") or "out"
        if port in UNCHOSEN_PORTS:
            continue
        outgoing.setdefault(edge["from"], []).append(Hop(edge["from"], port, edge["to"]))
    left = _hops_left(outgoing, end)
    if start not in left:
        return
    order = itertools.count()
    queue: list[tuple[int, int, int, list[Hop]]] = [(left[start], 0, next(order), [])]
    popped, found = 0, 0
    seen_paths: set[tuple[Hop, ...]] = set()
    while queue and found < limit and popped < MAX_PARTIAL_PATHS:
        _, _, _, path = heapq.heappop(queue)
        popped += 1
        here = path[-1].to if path else start
        if here == end and path:
            key = tuple(path)
            if key not in seen_paths:  # a duplicated edge would give the same path twice
                seen_paths.add(key)
                found += 1
                yield path
            continue
        visited = {start, *(h.to for h in path)}
        for hop in outgoing.get(here, []):
            if hop.to in left and hop.to not in visited:
                ranked = len(path) + 1 + left[hop.to]
                heapq.heappush(queue, (ranked, -(len(path) + 1), next(order), [*path, hop]))


def _hops_left(outgoing: dict[str, list[Hop]], end: str) -> dict[str, int]:
    """The fewest hops from each node that can reach `end` to it."""
    incoming: dict[str, list[str]] = {}
    for hops in outgoing.values():
        for hop in hops:
            incoming.setdefault(hop.to, []).append(hop.node)
    left, todo = {end: 0}, [end]
    for node in todo:  # breadth first: todo grows while it is walked
        for source in incoming.get(node, []):
            if source not in left:
                left[source] = left[node] + 1
                todo.append(source)
    return left


def _only(nodes: dict[str, dict[str, Any]], kind: str) -> str | None:
    found = [node_id for node_id, node in nodes.items() if node.get("kind") == kind]
    return found[0] if len(found) == 1 else None


def _suggestion(nodes: dict[str, dict[str, Any]], path: list[Hop],
                taken: set[str]) -> Suggestion:
    needs: list[Need] = []
    notes: list[str] = []
    for index, hop in enumerate(path):
        found = needs_of(nodes[hop.node], hop.port)
        before = path[index - 1].node if index > 0 else hop.node
        if found and nodes[before].get("kind") != "input":
            notes.append(f"{hop.node} sees the text of {before}, not the input; "
                         "the input was built as if it reached it unchanged")
        needs += found
    text, problem = build_input(needs)
    if problem:
        notes.append(problem)
    calls = [path[0].node, *(hop.to for hop in path)]
    return Suggestion(_name(nodes, path, taken), text, calls, path, notes)


def needs_of(node: dict[str, Any], port: str) -> list[Need]:
    """What the text reaching `node` must satisfy for it to send it out of `port`."""
    config = node.get("config") or {}
    if node.get("kind") == "condition" and port in ("true", "false"):
        return [Need(str(config.get("expression", "")), port == "true", node["id"])]
    if node.get("kind") != "router":
        return []
    routes = [(name, config[name]) for name in ROUTES
              if isinstance(config.get(name), str) and config[name].strip()]
    needs: list[Need] = []
    for name, expression in routes:
        if name == port:
            return [*needs, Need(expression, True, node["id"])]
        needs.append(Need(expression, False, node["id"]))
    return needs  # the default port: every route false


def build_input(needs: list[Need]) -> tuple[str, str | None]:
    """A text satisfying every need, or (a neutral text, why none could be built)."""
    try:
        tests = [(parse_condition(n.expression), n.holds) for n in needs]
    except ConditionError as exc:
        return FILLERS[0], f"a condition on the path does not parse ({exc})"
    for candidate in _candidates(needs):
        if len(candidate) <= MAX_SUGGESTED_INPUT and all(
                test(candidate) == holds for test, holds in tests):
            return candidate, None
    return FILLERS[0], "no input could be derived that satisfies every condition on the path"


def _candidates(needs: list[Need]) -> Iterator[str]:
    """Texts to try, most specific first; build_input keeps the first that satisfies all."""
    exact = [n for n in needs if _positive(n) in ("equals", "empty")]
    for need in exact:
        operator, argument = _split(need.expression)
        yield "" if operator == "empty" else argument.strip()
    parts: list[str] = []
    front: list[str] = []  # derived regex matches first: a `^` anchor wants the start
    for need in needs:
        operator, argument = _split(need.expression)
        if need.holds and operator == "contains":
            parts.append(argument)
        elif not need.holds and operator == "not_contains":
            parts.append(argument)
        elif need.holds and operator == "matches":
            derived = regex_example(argument)
            if derived is not None:
                front.append(derived)
    body = " ".join(p for p in [*front, *parts] if p)
    length = _min_length(needs)
    bases = [body] if body.strip() else []
    bases += [f"{body} {filler}".strip() for filler in FILLERS]
    for base in bases:
        yield base
        for pad in PADDING:
            if length is not None and len(base) <= length:
                yield base + " " + pad * max(0, length - len(base))


def _positive(need: Need) -> str:
    """The operator a need asks to hold, after a negation is folded in."""
    operator, _ = _split(need.expression)
    if need.holds:
        return operator
    return {"not_empty": "empty", "empty": "not_empty"}.get(operator, "")


def _min_length(needs: list[Need]) -> int | None:
    """The largest N of a longer_than:N that must hold (the text needs N+1 characters)."""
    found = [int(arg.strip()) for n in needs if n.holds
             for op, arg in [_split(n.expression)]
             if op == "longer_than" and arg.strip().isdigit()
             and len(arg.strip()) <= len(str(MAX_SUGGESTED_INPUT))]
    return max(found) if found else None


def _split(expression: str) -> tuple[str, str]:
    operator, _, argument = expression.partition(":")
    return operator.strip(), argument


def _name(nodes: dict[str, dict[str, Any]], path: list[Hop], taken: set[str]) -> str:
    """A readable, unique name: the node IDs, with the port where a node branches."""
    steps = [path[0].node]
    for hop in path:
        if hop.port != "out":
            steps[-1] = f"{steps[-1]} [{hop.port}]"
        steps.append(hop.to)
    name = "Path: " + " → ".join(steps)
    if len(name) > MAX_CASE_NAME:
        name = name[: MAX_CASE_NAME - 1] + "…"
    unique, counter = name, 2
    while unique in taken:
        suffix = f" ({counter})"
        unique, counter = name[: MAX_CASE_NAME - len(suffix)] + suffix, counter + 1
    return unique


# A string matching a regular expression, for the simple patterns conditions use
# (literals, classes, alternations, repeats, anchors). Python's own regex parser reads
# the pattern; anything it cannot walk gives None, and build_input then says so.
_sre: Any = importlib.import_module("re._parser")
_CATEGORY_SAMPLES: Final = {"CATEGORY_DIGIT": "1", "CATEGORY_WORD": "a", "CATEGORY_SPACE": " ",
                            "CATEGORY_NOT_DIGIT": "a", "CATEGORY_NOT_WORD": " ",
                            "CATEGORY_NOT_SPACE": "a"}


def regex_example(pattern: str) -> str | None:
    """A string the pattern finds, or None when none is derived."""
    try:
        parsed = _sre.parse(pattern)
        return _walk(parsed)
    except Exception:  # noqa: BLE001 - any pattern we cannot walk is simply underivable
        return None


def _walk(items: Any) -> str:
    return "".join(_item(op, av) for op, av in items)


def _item(op: Any, av: Any) -> str:
    name = str(op)
    if name == "LITERAL":
        return chr(av)
    if name == "NOT_LITERAL":
        return "a" if chr(av) != "a" else "b"
    if name == "ANY":
        return "a"
    if name == "IN":
        return _in(av)
    if name == "BRANCH":
        return _walk(av[1][0])
    if name == "SUBPATTERN":
        return _walk(av[-1])
    if name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        low, _high, inner = av
        return _walk(inner) * max(int(low), 0)
    if name == "AT":
        return ""
    if name == "CATEGORY":
        return _CATEGORY_SAMPLES[str(av)]
    raise ValueError(f"cannot derive an example for {name}")


def _in(items: Any) -> str:
    first_op, first_av = items[0]
    if str(first_op) == "NEGATE":
        for candidate in "a1 zQ-":
            if not _in_matches(items[1:], candidate):
                return candidate
        raise ValueError("cannot derive a negated class")
    return _in_item(first_op, first_av)


def _in_item(op: Any, av: Any) -> str:
    name = str(op)
    if name == "LITERAL":
        return chr(av)
    if name == "RANGE":
        return chr(av[0])
    if name == "CATEGORY":
        return _CATEGORY_SAMPLES[str(av)]
    raise ValueError(f"cannot derive an example for {name}")


def _in_matches(items: Any, char: str) -> bool:
    for op, av in items:
        name = str(op)
        if name == "LITERAL" and chr(av) == char:
            return True
        if name == "RANGE" and av[0] <= ord(char) <= av[1]:
            return True
        if name == "CATEGORY":
            return True  # conservative: treat any class as matching
    return False
