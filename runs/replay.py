"""A re-run from a node: which recorded outcomes of an earlier run the new run repeats.

`POST …/runs` with `from_run` and `from_node` runs the graph to run (the saved
revision, or the version) with every node that is neither `from_node` nor downstream of
it repeating its last completed attempt recorded in `from_run` (runner/records.py):
no call, no tokens, no side effect. Nodes without such a record (skipped, failed, never
reached) run as usual, so resuming a failed run from its failed node is the same
request. The re-run takes the recorded run's input.

Refused (422 validation_failed, one issue per node) when a node to repeat, or a node
it depends on, changed since the recorded run (kind, settings or inbound edges:
contracts.replay), or when its recorded output is not exact (cut at the record limit,
or redacted because it held a secret).
"""

from __future__ import annotations

import uuid
from typing import Any

from contracts.issues import Issue, error
from contracts.normalize import NotNormalizable, normalize
from contracts.replay import changed_upstream, downstream
from designs.models import Design, Version
from kionga.errors import APIError, invalid_field
from runs.models import Run
from runs.node_records import reusable_records

UPSTREAM_CHANGED = "rerun_upstream_changed"
NOT_EXACT = "rerun_record_not_exact"


def check_source_run(design: Design, from_run: str | None, from_node: str | None,
                     graph: dict[str, Any]) -> Run | None:
    """The run a re-run repeats (of the same design, ended), or None for a plain start."""
    if from_run is None and from_node is None:
        return None
    if from_run is None or from_node is None:
        missing = "from_node" if from_node is None else "from_run"
        raise invalid_field(missing, "A re-run needs both from_run and from_node.")
    found = _uuid(from_run)
    source = None if found is None else Run.objects.filter(pk=found, design=design).first()
    if source is None:
        raise invalid_field("from_run", "No run of this design has this ID.")
    if source.is_active:
        raise invalid_field("from_run", "This run has not ended yet; re-run it once it has.")
    if from_node not in {node["id"] for node in graph["nodes"]}:
        raise invalid_field("from_node", f"No node of the graph has the ID {from_node!r}.")
    return source


def check_reuse(source: Run, from_node: str, graph: dict[str, Any]) -> dict[str, Any]:
    """The task's `reuse` ({node ID: {port, value, from_run}}), or 422 with the issues."""
    again = downstream(graph, from_node)
    nodes = {node["id"] for node in graph["nodes"]}
    records = {node: data for node, data in reusable_records(source).items()
               if node in nodes and node not in again}
    issues: list[Issue] = []
    for node, culprits in changed_upstream(_graph_of(source), graph, records).items():
        named = ", ".join(culprits)
        issues.append(error(UPSTREAM_CHANGED, f"Node {node}'s recorded output cannot be reused: "
                            f"{named} changed since run {source.pk}. Re-run from "
                            f"{culprits[0]} (or before it) instead.", node_id=node))
    for node, data in sorted(records.items()):
        output = data.get("output")
        if not isinstance(output, dict) or "port" not in output:
            issues.append(error(NOT_EXACT, f"Node {node} has no recorded output to reuse.",
                                node_id=node))
        elif output.get("truncated") or output.get("redacted"):
            why = "was cut at the record limit" if output.get("truncated") else "held a secret"
            issues.append(error(NOT_EXACT, f"Node {node}'s recorded output {why}: it cannot be "
                                f"repeated exactly. Re-run from {node} (or before it).",
                                node_id=node))
    if issues:
        raise APIError(422, "validation_failed", f"Run {source.pk} cannot feed this graph "
                       f"from {from_node}.", {"issues": [i.to_dict() for i in issues]})
    return {node: {"port": data["output"]["port"], "value": data["output"]["value"],
                   "from_run": str(source.pk)} for node, data in records.items()}


def _graph_of(source: Run) -> dict[str, Any]:
    """The normalized graph the recorded run ran (its version's, or its revision's)."""
    version_id = _uuid(source.version_id) if source.version_id else None
    if version_id is not None:
        version = Version.objects.filter(pk=version_id).first()
        if version is not None:
            graph: dict[str, Any] = version.artifact["graph"]
            return graph
    design, number = source.design, source.revision
    stored = None
    if design is not None and number is not None:
        stored = design.revisions.filter(number=number).first()
    try:
        if stored is not None:
            return normalize(stored.graph).graph
    except NotNormalizable:
        pass
    raise invalid_field("from_run", "The graph this run ran is no longer stored.")


def _uuid(raw: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(raw)
    except ValueError:
        return None
