"""Resource checks for the validator, scoped to one project.

A missing ID and another project's ID give the same answer, so nothing leaks.

The rows of the keyed resources (models, functions, connections, knowledge bases,
datasets) are asked in SQL, existing_refs_sql: a standalone prepared statement here,
and a part of the run start's one read (runs.start_read), which asks it about the
references its revision's cached validation lists and hands the answer back as
`known`. The same SQL either way, so the rule has one implementation.
"""

from __future__ import annotations

import json
from collections.abc import Set
from typing import Final

from django.db.models import Model

from contracts.registry import ResourceKind
from designs.versions import existing_version_ids
from kionga import mcp_tools, prepared_sql
from kionga.builtin_tools import BUILTIN_TOOLS
from kionga.models import Project
from kionga.resource_models import (
    ApiConnection,
    Dataset,
    Function,
    KnowledgeBase,
    McpServer,
    ModelEndpoint,
)

_MODELS: dict[str, type[Model]] = {
    "model": ModelEndpoint,
    "function": Function,
    "connection": ApiConnection,
    "knowledge_base": KnowledgeBase,
    "dataset": Dataset,
}


def existing_refs_sql(project: str, refs: str) -> str:
    """SQL of a json array of the [kind, key] pairs among `refs` (an SQL jsonb array
    of [kind, key, …] lists; NULL for none) that name a row of their kind's table in
    `project` (an SQL expression of a project ID). Kinds of no table are never found."""
    cases = " ".join(
        f"WHEN '{kind}' THEN EXISTS (SELECT 1 FROM {model._meta.db_table} t "
        f"WHERE t.project_id = {project} AND t.key = r.ref->>1)"
        for kind, model in _MODELS.items())
    return (f"(SELECT COALESCE(json_agg(json_build_array(r.ref->>0, r.ref->>1)), '[]')"
            f" FROM jsonb_array_elements(CASE jsonb_typeof({refs}) WHEN 'array' "
            f"THEN {refs} ELSE '[]'::jsonb END) r(ref)"
            f" WHERE CASE r.ref->>0 {cases} ELSE false END)::text")


_EXISTING: Final = f"SELECT {existing_refs_sql('%(project)s', '%(refs)s::jsonb')}"

Known = Set[tuple[str, str]]


def known_refs(answer: str | None) -> Known:
    """existing_refs_sql's answer as (kind, key) pairs."""
    return {(kind, key) for kind, key in json.loads(answer or "[]")}


class ProjectResources:
    """The validator asks with existing_ids: one query per resource kind, whatever
    the number of IDs (contracts.resources.BatchResourceCheck). `known`: the keyed
    rows existing_refs_sql found for every ID the validator will ask about, read
    already (no query then)."""

    def __init__(self, project: Project, known: Known | None = None) -> None:
        self.project = project
        self.known = known

    def exists(self, kind: ResourceKind, resource_id: str) -> bool:
        return resource_id in self.existing_ids(kind, {resource_id})

    def existing_ids(self, kind: ResourceKind, resource_ids: set[str]) -> set[str]:
        found, rest = set(), resource_ids
        if kind == "function":
            found = self._functions(resource_ids)
            # Function keys are slugs: an MCP tool's name is never one.
            rest = {i for i in resource_ids - found if not mcp_tools.is_mcp_name(i)}
        if kind == "version":
            return found | existing_version_ids(self.project, rest)
        model = _MODELS.get(kind)
        if model is None or not rest:
            return found
        return found | self._keyed(kind, rest)

    def _keyed(self, kind: ResourceKind, ids: set[str]) -> set[str]:
        known = self.known
        if known is None:
            refs = json.dumps([[kind, i] for i in sorted(ids)])
            rows = prepared_sql.fetch_all(_EXISTING, {"project": self.project.pk,
                                                      "refs": refs})
            known = known_refs(rows[0][0])
        return {i for i in ids if (kind, i) in known}

    def _functions(self, ids: set[str]) -> set[str]:
        """The built-in tools and the listed MCP tools among ids (no Function rows)."""
        found = {i for i in ids if i in BUILTIN_TOOLS}
        servers = mcp_tools.server_keys(ids)
        if servers:
            listings = McpServer.objects.filter(project=self.project, key__in=servers)
            found |= mcp_tools.existing_functions(listings.values_list("key", "tools"), ids)
        return found


def version_exists(project: Project, version_id: str) -> bool:
    return bool(existing_version_ids(project, {version_id}))
