"""Resource checks for the validator, scoped to one project.

A missing ID and another project's ID give the same answer, so nothing leaks.
"""

from __future__ import annotations

from django.db.models import Model

from contracts.registry import ResourceKind
from designs.versions import existing_version_ids
from kionga import mcp_tools
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


class ProjectResources:
    """The validator asks with existing_ids: one query per resource kind, whatever
    the number of IDs (contracts.resources.BatchResourceCheck)."""

    def __init__(self, project: Project) -> None:
        self.project = project

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
        keys = model._default_manager.filter(project=self.project, key__in=rest)
        return found | set(keys.values_list("key", flat=True))

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
