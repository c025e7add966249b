"""Properties over random and mutated documents: validate_graph never raises, its reports
keep their invariants, and the hash does not depend on array or key order."""

from __future__ import annotations

import copy
import re
from collections import Counter
from typing import Any

from contracts_kit import check, naive_behaviour_text
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from contracts.fixtures import load_graph_fixtures
from contracts.hashing import behaviour_document, canonical_json
from contracts.issues import Issue
from contracts.schemas import schema_errors
from contracts.validate import Report, StaticResources

FIXTURE_GRAPHS = [f["graph"] for f in load_graph_fixtures()
                  if isinstance(f["graph"], dict) and len(f["graph"].get("nodes", [])) < 60]
KINDS = ["input", "output", "prompt", "model", "condition", "router", "join", "tool", "loop",
         "memory", "extract", "knowledge", "webhook"]
TRICKY = ["", " ", "in", "out", "true", "route_1", "error", "llm", "contains:x", "matches:(",
          "a\ud800", "\u2028", "é", "items..0", "0", "-1", "21", "window", "x" * 70,
          "nodes.0", "a.b"]
CODE = re.compile(r"^[a-z]+(_[a-z0-9]+)*$")

SETTINGS = settings(max_examples=250, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

scalars = (st.none() | st.booleans() | st.integers(-(2**70), 2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12)
           | st.sampled_from(TRICKY))
keys = st.sampled_from(["id", "kind", "config", "from", "to", "from_port", "to_port", "name",
                        "x", "template", "expression", "route_1", "model", "nodes", "edges",
                        "settings", "max_steps"]) | st.text(max_size=6)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=20,
)


def assert_invariants(doc: Any, report: Report) -> None:
    assert report.runnable == (not any(i.severity == "error" for i in report.issues))
    assert (report.graph is None) == (report.content_sha256 is None)
    if report.content_sha256 is not None:
        assert re.fullmatch(r"[0-9a-f]{64}", report.content_sha256)
    for issue in report.issues:
        assert_issue_shape(doc, issue)
    ranks = [rank(i) for i in report.issues]
    assert ranks == sorted(ranks), [i.path for i in report.issues]
    body = report.to_dict()
    assert list(body) == ["runnable", "issues", "content_sha256", "graph"]
    if report.runnable:
        assert report.graph is not None
        assert schema_errors("graph.v2", report.graph) == []


def assert_issue_shape(doc: Any, issue: Issue) -> None:
    assert isinstance(issue, Issue)
    assert issue.severity in ("error", "warning")
    assert CODE.match(issue.code), issue.code
    assert isinstance(issue.message, str) and issue.message
    assert issue.node_id is None or isinstance(issue.node_id, str)
    if issue.path is not None:
        assert resolves(doc, issue.path), (issue.code, issue.path)


def resolves(doc: Any, path: str) -> bool:
    """The path leads into the submitted document, up to where the value is missing:
    the last step (a missing field or port), or `config.<key>` of a node without one."""
    parts = path.split(".")
    value = doc
    for i, part in enumerate(parts):
        rest = parts[i:]
        if i > 0 and parts[i - 1] in ("config", "settings"):
            # The rest is one key, which may hold dots; a null config counts as {}.
            return isinstance(value, dict) or (value is None and parts[i - 1] == "config")
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return isinstance(value, dict) and (len(rest) == 1 or part == "config")
    return True


def rank(issue: Issue) -> tuple[int, int]:
    if issue.path is None:
        document = issue.code in ("invalid_document", "unsupported_schema_version",
                                  "migrated_from_v1")
        return (0, 0) if document else (4, 0)
    head, _, rest = issue.path.partition(".")
    section = {"settings": 1, "nodes": 2, "edges": 3}.get(head, 0)
    index = rest.partition(".")[0]
    return (section, int(index) if section >= 2 and index.isdigit() else 0)


@SETTINGS
@given(json_values)
def test_it_never_raises_on_random_json(doc: Any) -> None:
    assert_invariants(doc, check(doc))


@SETTINGS
@given(st.fixed_dictionaries(
    {"nodes": st.lists(json_values, max_size=6), "edges": st.lists(json_values, max_size=6)},
    optional={"schema_version": st.sampled_from([1, 2, 3, "2", None, True]),
              "settings": json_values, "name": json_values},
))
def test_it_never_raises_on_random_nodes_and_edges(doc: Any) -> None:
    assert_invariants(doc, check(doc))


node_like = st.fixed_dictionaries(
    {"id": st.sampled_from(["in", "out", "a", "b", "c", "Bad"]), "kind": st.sampled_from(KINDS)},
    optional={"config": st.dictionaries(keys, scalars, max_size=4)},
)
edge_like = st.fixed_dictionaries(
    {"from": st.sampled_from(["in", "out", "a", "b", "c", "z"]),
     "to": st.sampled_from(["in", "out", "a", "b", "c", "z"])},
    optional={"from_port": st.sampled_from(["out", "true", "false", "route_1", "default",
                                            "error", "", "x"]),
              "to_port": st.sampled_from(["in", "", "x"])},
)


@SETTINGS
@given(st.lists(node_like, max_size=7), st.lists(edge_like, max_size=10), json_values)
def test_it_never_raises_on_plausible_graphs(nodes: Any, edges: Any, settings_: Any) -> None:
    doc = {"schema_version": 2, "nodes": nodes, "edges": edges, "settings": settings_}
    assert_invariants(doc, check(doc))
    resources = StaticResources({"model": ["m"]})
    assert_invariants(doc, check(doc, resources))


def mutate(data: st.DataObject, doc: Any) -> Any:
    """Delete, replace, retype, shuffle or duplicate something somewhere."""
    spots = list(containers(doc))
    if not spots:
        return doc
    parent, key = data.draw(st.sampled_from(spots))
    action = data.draw(st.sampled_from(["delete", "replace", "retype", "shuffle", "duplicate"]))
    if action == "delete":
        del parent[key]
    elif action == "replace":
        parent[key] = data.draw(json_values)
    elif action == "retype":
        parent[key] = retype(parent[key])
    elif isinstance(parent[key], list) and parent[key]:
        if action == "shuffle":
            parent[key] = data.draw(st.permutations(parent[key]))
        else:
            parent[key].append(copy.deepcopy(data.draw(st.sampled_from(parent[key]))))
    return doc


def containers(value: Any) -> Any:
    """(parent, key) of every value inside `value`."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, child in list(items):
        yield value, key
        if isinstance(child, (dict, list)):
            yield from containers(child)


def retype(value: Any) -> Any:
    if isinstance(value, bool):
        return "true"
    if isinstance(value, str):
        return len(value)
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, list):
        return {str(i): str(v) for i, v in enumerate(value)}  # JSON keys are strings
    if isinstance(value, dict):
        return list(value.values())
    return ""


@SETTINGS
@given(st.sampled_from(FIXTURE_GRAPHS), st.data())
def test_it_never_raises_on_mutated_fixtures(graph: Any, data: st.DataObject) -> None:
    doc = copy.deepcopy(graph)
    for _ in range(data.draw(st.integers(1, 4))):
        doc = mutate(data, doc)
    report = check(doc)
    assert_invariants(doc, report)
    assert check(copy.deepcopy(doc)).to_dict() == report.to_dict()  # deterministic
    if report.graph is not None:
        assert_shared_behaviour_document_is_exact(report.graph)


@SETTINGS
@given(st.sampled_from(FIXTURE_GRAPHS), st.data())
def test_it_hashes_the_same_whatever_the_order(graph: Any, data: st.DataObject) -> None:
    doc = copy.deepcopy(graph)
    if data.draw(st.booleans()):
        doc = mutate(data, doc)
    report = check(doc)
    if report.graph is None:
        return
    shuffled = copy.deepcopy(doc)
    shuffled["nodes"] = data.draw(st.permutations(shuffled["nodes"]))
    shuffled["edges"] = data.draw(st.permutations(shuffled["edges"]))
    for n in shuffled["nodes"]:
        if isinstance(n.get("config"), dict):
            n["config"] = dict(data.draw(st.permutations(list(n["config"].items()))))
    again = check(shuffled)
    assert again.content_sha256 == report.content_sha256
    assert again.runnable == report.runnable
    assert Counter(i.code for i in again.issues) == Counter(i.code for i in report.issues)


def assert_shared_behaviour_document_is_exact(graph: dict[str, Any]) -> None:
    assert canonical_json(behaviour_document(graph)) == naive_behaviour_text(graph)
