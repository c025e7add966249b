"""Published versions: access, lookups per project, and the versions a graph reaches.

A version ID is the version's UUID as text: what subflow, map and loop nodes name in
their `subflow` setting. IDs are opaque to the contracts; a malformed, missing and
another project's ID all resolve to nothing, so nothing leaks.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import Any

from contracts.resources import graph_resources
from designs.models import Design, Version
from designs.signals import version_deployments
from kionga.access import (
    AnyUser,
    check_project_access,
    check_row_access,
    projects_of,
)
from kionga.models import Project, Role

LIST_LIMIT = 500


def parse_version_ids(ids: Iterable[str]) -> dict[str, uuid.UUID]:
    """The IDs that are UUIDs, keyed by the text the graph holds."""
    parsed: dict[str, uuid.UUID] = {}
    for text in ids:
        try:
            parsed[text] = uuid.UUID(text)
        except ValueError:
            continue
    return parsed


def existing_version_ids(project: Project, ids: set[str]) -> set[str]:
    """The subset of `ids` that are versions of `project` (one query)."""
    parsed = parse_version_ids(ids)
    if not parsed:
        return set()
    found = set(Version.objects.filter(project=project, pk__in=parsed.values())
                .values_list("pk", flat=True))
    return {text for text, pk in parsed.items() if pk in found}


def check_version_access(user: AnyUser, version_id: uuid.UUID | str,
                         min_role: str = Role.VIEWER) -> Version:
    """The version if the caller may see it (404 otherwise, whatever the reason)."""
    return check_row_access(Version.objects.select_related("design", "project"), version_id,
                            user, min_role, "Version not found.")


def versions_of_design(design: Design) -> list[dict[str, Any]]:
    """The design's versions, newest first, each with where it is deployed (the
    deployments app answers `version_deployments`)."""
    deployed: dict[str, list[dict[str, Any]]] = {}
    for _, found in version_deployments.send(sender=Design, design=design):
        if isinstance(found, dict):
            for version_id, entries in found.items():
                deployed.setdefault(version_id, []).extend(entries)
    return [{**v.summary(), "deployments": deployed.get(str(v.pk), [])}
            for v in design.versions.order_by("-number").defer("artifact")
            .select_related("author")[:LIST_LIMIT]]


def versions_for_picker(user: AnyUser, project_id: Any = None) -> list[dict[str, Any]]:
    """Versions in the caller's projects (or one of them), newest first, without graphs."""
    found = Version.objects.filter(project__in=projects_of(user))
    if project_id is not None:
        found = found.filter(project=check_project_access(user, project_id))
    return [v.summary() for v in found.order_by("-created_at", "-number")
            .defer("artifact").select_related("author")[:LIST_LIMIT]]


def reached_versions(project: Project, graph: dict[str, Any]) -> list[dict[str, Any]]:
    """Every version `graph` reaches through subflow, map and loop nodes, transitively,
    once each, sorted by ID: the artifact's `subflows` entries {version_id,
    content_sha256, graph}.

    A version's own artifact already lists everything it reaches, so one query over
    the graph's direct IDs is enough. IDs that are not versions of `project` are left
    out (validation refuses such graphs before anything is published or run).
    """
    direct = set(graph_resources(graph).get("version", []))
    parsed = parse_version_ids(direct)
    if not parsed:
        return []  # the usual graph: no query at all
    entries: dict[str, dict[str, Any]] = {}
    rows = Version.objects.filter(project=project, pk__in=parsed.values())
    for version in rows.only("pk", "content_sha256", "artifact"):
        entries[str(version.pk)] = {"version_id": str(version.pk),
                                    "content_sha256": version.content_sha256,
                                    "graph": version.artifact["graph"]}
        for nested in version.artifact.get("subflows", []):
            entries.setdefault(nested["version_id"], nested)
    # Graph text may spell a UUID in upper case: index by what the nodes say too.
    for text, pk in parsed.items():
        if str(pk) in entries and text != str(pk):
            entries[text] = {**entries[str(pk)], "version_id": text}
    return [entries[key] for key in sorted(entries)]
