"""Resource checks for the validator, scoped to one project.

A missing ID and another project's ID give the same answer, so nothing leaks.
"""

from __future__ import annotations

from django.db.models import Model

from contracts.registry import ResourceKind
from designs.versions import existing_version_ids
from kionga.builtin_tools import BUILTIN_TOOLS
from kionga.models import Project
from kionga.resource_models import ApiConnection, Dataset, Function, KnowledgeBase, ModelEndpoint

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
        if kind == "function" and resource_id in BUILTIN_TOOLS:
            return True
        if kind == "version":
            return version_exists(self.project, resource_id)
        model = _MODELS.get(kind)
        if model is None:
            return False
        return model._default_manager.filter(project=self.project, key=resource_id).exists()

    def existing_ids(self, kind: ResourceKind, resource_ids: set[str]) -> set[str]:
        found = {i for i in resource_ids if i in BUILTIN_TOOLS} if kind == "function" else set()
        rest = resource_ids - found
        if kind == "version":
            return found | existing_version_ids(self.project, rest)
        model = _MODELS.get(kind)
        if model is None or not rest:
            return found
        keys = model._default_manager.filter(project=self.project, key__in=rest)
        return found | set(keys.values_list("key", flat=True))


def version_exists(project: Project, version_id: str) -> bool:
    return bool(existing_version_ids(project, {version_id}))
