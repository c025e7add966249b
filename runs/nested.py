"""The published versions a run reaches, checked against the project at every start.

A run's graph may name versions in subflow, map and loop nodes; those reach others.
Their graphs travel with the task (verified by the runner against their hashes), and
their resources join the run's scope (Run.resources): the run credential may call what
any graph of the run names, nothing else. The resources of each nested graph are
re-checked now — a resource deleted since the version was published refuses the run,
as it would refuse a design naming it.
"""

from __future__ import annotations

from typing import Any

from contracts.resources import graph_resources
from designs.actions import graph_report
from designs.versions import reached_versions
from kionga.errors import APIError
from kionga.models import Project

RESOURCE_CODES = frozenset({"unknown_resource", "unknown_version"})


def checked_subflows(project: Project, graph: dict[str, Any]) -> list[dict[str, Any]]:
    """Every version `graph` reaches ({version_id, content_sha256, graph}), or 422
    validation_failed when one of them names a resource the project no longer has."""
    subflows = reached_versions(project, graph)
    issues: list[dict[str, Any]] = []
    for entry in subflows:
        issues += resource_issues(project, entry["graph"], entry["version_id"])
    if issues:
        raise APIError(422, "validation_failed",
                       "A published version this graph runs names resources you can no "
                       "longer use.", {"issues": issues})
    return subflows


def run_resources(graph: dict[str, Any], subflows: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The resource IDs of the graph and of every nested version's graph, per kind."""
    merged: dict[str, set[str]] = {}
    for one in (graph, *(entry["graph"] for entry in subflows)):
        for kind, ids in graph_resources(one).items():
            merged.setdefault(kind, set()).update(ids)
    return {kind: sorted(ids) for kind, ids in sorted(merged.items())}


def resource_issues(project: Project, graph: dict[str, Any],
                    version_id: str) -> list[dict[str, Any]]:
    """The resource issues of a published graph now (only those: the graph itself was
    valid when published and never changes)."""
    report = graph_report(graph, project)
    return [{**issue.to_dict(), "message": f"Published version {version_id}: {issue.message}"}
            for issue in report.issues if issue.code in RESOURCE_CODES]
