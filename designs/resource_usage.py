"""The published versions that use a resource, for kionga.projects.usage: a resource
a version's graph (or a flow it embeds) names cannot be deleted while the version
exists. Drafts are not counted: their next validation says unknown_resource."""

from __future__ import annotations

from typing import Any

from contracts.resources import graph_resources
from designs.models import Version
from kionga import mcp_tools
from kionga.models import Project


def versions_using(project: Project, kind: str, resource_id: str) -> list[dict[str, Any]]:
    found = []
    rows = (Version.objects.filter(project=project).select_related("design")
            .only("pk", "number", "artifact", "design__name").order_by("design__name", "number"))
    for version in rows.iterator(chunk_size=200):
        graphs = [version.artifact.get("graph") or {}]
        graphs += [sub.get("graph") or {} for sub in version.artifact.get("subflows", [])]
        if any(_uses(graph_resources(graph), kind, resource_id) for graph in graphs):
            found.append({"type": "version", "id": str(version.pk),
                          "design": version.design.name, "number": version.number})
    return found


def _uses(named: dict[str, list[str]], kind: str, resource_id: str) -> bool:
    if kind == "mcp_server":  # its tools are functions named mcp:<server>/<tool>
        return resource_id in mcp_tools.server_keys(named.get("function", []))
    return resource_id in named.get(kind, [])
