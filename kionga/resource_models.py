"""Platform resources a graph refers to by ID. Their secrets never leave the gateway.

IDs in graphs are the per-project `key` (an opaque string to the graph). Secrets are
write-only: no `to_dict()` includes them and the admin shows them masked.
"""

from __future__ import annotations

from typing import Any

from django.db import models

from kionga.models import Project

KEY_HELP = "The ID graphs use (unique in the project)."


class ProjectResource(models.Model):
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="+")
    key = models.SlugField(max_length=100, help_text=KEY_HELP)
    name = models.CharField(max_length=200, blank=True)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        abstract = True

    def __str__(self) -> str:
        return f"{self.project.slug}/{self.key}"

    def base_dict(self) -> dict[str, Any]:
        return {"id": self.key, "name": self.name or self.key, "project_id": self.project_id}


def _unique_key(model: str) -> list[models.BaseConstraint]:
    return [models.UniqueConstraint(fields=["project", "key"], name=f"{model}_unique_key")]


class ModelEndpoint(ProjectResource):
    """An OpenAI-compatible chat model served by some endpoint, with its prices."""

    base_url = models.URLField(max_length=500)
    model_name = models.CharField(max_length=200)
    secret = models.CharField(max_length=500, blank=True)
    price_prompt_per_1k = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    price_completion_per_1k = models.DecimalField(max_digits=12, decimal_places=6, default=0)

    class Meta:
        constraints = _unique_key("model")


class Function(ProjectResource):
    """A webhook tool the gateway calls with its own secret (built-in tools need no row)."""

    url = models.URLField(max_length=500)
    secret = models.CharField(max_length=500, blank=True)

    class Meta:
        constraints = _unique_key("function")


class ApiConnection(ProjectResource):
    base_url = models.URLField(max_length=500)
    # {"Authorization": "Bearer ..."}: sent by the gateway, never shown back.
    secret_headers = models.JSONField(default=dict, blank=True)
    allowed_methods = models.JSONField(default=list, blank=True)
    # Path prefixes below base_url a run may call, e.g. ["/v1/orders"]; empty: any.
    allowed_paths = models.JSONField(default=list, blank=True)

    class Meta:
        constraints = _unique_key("connection")


class KnowledgeBase(ProjectResource):
    class Meta:
        constraints = _unique_key("knowledge_base")


class KnowledgeDocument(models.Model):
    knowledge_base = models.ForeignKey(
        KnowledgeBase, on_delete=models.CASCADE, related_name="documents"
    )
    title = models.CharField(max_length=300, blank=True)
    text = models.TextField()

    def __str__(self) -> str:
        return self.title or self.text[:40]


class Dataset(ProjectResource):
    class Meta:
        constraints = _unique_key("dataset")


class DatasetObject(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="entries")
    key = models.CharField(max_length=300)
    value = models.JSONField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["dataset", "key"], name="dataset_object_unique_key")
        ]

    def __str__(self) -> str:
        return self.key
