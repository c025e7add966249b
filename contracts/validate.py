"""validate_graph: every issue of a graph document, its normalized form and its hash.

The checks live in small modules (document, nodes, config, edges, graph shape,
resources); this one runs them in order, builds the normalized graph when every node
and edge could be normalized, and sorts the issues into document order.

validate_graph never raises for a JSON document: type problems are issues, and only
a body that is not an object with `nodes`/`edges` arrays is `invalid_document`.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

from contracts.hashing import content_sha256
from contracts.issues import Issue, error
from contracts.normalize import assemble, migrated_warning, normalize_settings
from contracts.resources import (
    ResourceCheck,
    ResourceRef,
    StaticResources,
    missing_resources,
    resource_refs,
)
from contracts.validate_document import (
    check_document_shape,
    check_name,
    check_schema_version,
    check_settings,
)
from contracts.validate_edges import check_edge_count, check_edges
from contracts.validate_graph_shape import check_graph_shape
from contracts.validate_nodes import NodeView, check_node_counts, check_nodes

__all__ = [
    "Report",
    "ResourceCheck",
    "ResourceRef",
    "StaticResources",
    "check_document_shape",
    "validate_graph",
    "with_resources",
]

# Issues about the document as a whole come first even though they have no path.
_DOCUMENT_CODES = frozenset({"invalid_document", "unsupported_schema_version", "migrated_from_v1"})
_SECTIONS = {"settings": 1, "nodes": 2, "edges": 3}


@dataclass
class Report:
    runnable: bool
    issues: list[Issue]
    graph: dict[str, Any] | None = None
    content_sha256: str | None = None
    # The resource IDs the graph names, for checking them later (with_resources).
    resource_refs: list[ResourceRef] = field(default_factory=list)

    @property
    def errors(self) -> list[Issue]:
        return [i for i in self.issues if i.severity == "error"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "runnable": self.runnable,
            "issues": [i.to_dict() for i in self.issues],
            "content_sha256": self.content_sha256,
            "graph": self.graph,
        }


@dataclass
class _Checked:
    # Issues in document order, and those found later (graph-wide checks) that
    # still have to be merged in.
    issues: list[Issue]
    late: list[Issue] = field(default_factory=list)
    nodes: list[NodeView] = field(default_factory=list)
    graph: dict[str, Any] | None = None
    content_sha256: str | None = None


def validate_graph(doc: Any, resources: ResourceCheck | None = None) -> Report:
    """Validate a submitted graph document (version 1 or 2).

    With `resources`, IDs in the config are checked against the project; without,
    those checks are skipped. Errors raised by `resources` itself propagate: a
    database outage is not a problem of the document.
    """
    try:
        checked = _check(doc)
    except RecursionError:
        # Only values nested deeper than Python's recursion limit get here.
        checked = _Checked([error("invalid_document", "The document is nested too deeply.")])
    issues = _merge(checked.issues, checked.late)
    report = Report(_runnable(issues), issues, checked.graph, checked.content_sha256,
                    resource_refs(checked.nodes))
    return report if resources is None else with_resources(report, resources)


def with_resources(report: Report, resources: ResourceCheck) -> Report:
    """`report` (of validate_graph without resources) plus the issues of its resource
    IDs that do not exist: the same report validate_graph gives with `resources`, so a
    caller may keep the resource-free part and re-check only the IDs."""
    missing = missing_resources(report.resource_refs, resources)
    if not missing:
        return report
    issues = _merge(list(report.issues), missing)
    return Report(_runnable(issues), issues, report.graph, report.content_sha256,
                  report.resource_refs)


def _runnable(issues: list[Issue]) -> bool:
    return not any(i.severity == "error" for i in issues)


def _check(doc: Any) -> _Checked:
    shape = check_document_shape(doc)
    if shape:
        return _Checked(shape)
    unsupported = check_schema_version(doc)
    if unsupported is not None:
        # Another version's rules are unknown here: say only that.
        return _Checked([unsupported])
    version: int = doc.get("schema_version", 1)
    # Each step appends in document order; steps that look at the whole graph
    # write to `late`.
    issues = [migrated_warning()] if version == 1 else []
    issues += check_name(doc)
    issues += check_settings(doc)
    nodes = check_nodes(doc["nodes"], version, issues)
    edges = check_edges(doc["edges"], nodes.by_id, issues)
    late = check_node_counts(len(doc["nodes"]), nodes.views)
    late += check_edge_count(len(doc["edges"]))
    check_graph_shape(nodes.by_id, edges.views, late)
    checked = _Checked(issues, late, nodes.views)
    if nodes.complete and edges.complete:
        # complete means every node has a view with its normalized form.
        node_docs = [v.normalized for v in nodes.views if v.normalized is not None]
        checked.graph = assemble(doc, node_docs, edges.normalized, normalize_settings(doc))
        checked.content_sha256 = content_sha256(checked.graph)
    return checked


def _merge(ordered: list[Issue], late: list[Issue]) -> list[Issue]:
    """Insert the `late` issues into the already document-ordered list.

    Sorting the whole list would compute a key for each of possibly thousands of
    issues; late issues are usually few, and bisect needs only a handful of keys.
    """
    late.sort(key=_order)
    for issue in late:
        ordered.insert(bisect_right(ordered, _order(issue), key=_order), issue)
    return ordered


def _order(issue: Issue) -> tuple[int, int]:
    """Document order: whole-document issues, settings, nodes and edges by index, graph."""
    if issue.path is None:
        return (0, 0) if issue.code in _DOCUMENT_CODES else (4, 0)
    head, _, rest = issue.path.partition(".")
    section = _SECTIONS.get(head)
    if section is None:
        return (0, 0)
    if section == 1:
        return (1, 0)  # settings keys keep the order they were found in
    position = rest.partition(".")[0]  # an index this module wrote: ASCII digits
    return (section, int(position) if position.isdigit() and position.isascii() else 0)
