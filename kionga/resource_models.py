"""Platform resources a graph refers to by ID. Their secrets never leave the gateway.

IDs in graphs are the per-project `key` (an opaque string to the graph). Secrets are
write-only: no `to_dict()` includes them and the admin shows them masked. They are
stored encrypted (kionga.secret_fields), bound to the project and key of their row, and
follow no changed destination (`moved`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.db import models

from kionga.models import Project
from kionga.secret_fields import EncryptedJSONField, EncryptedTextField

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

    # The URL the secrets are sent to, and the secret fields ('' / (): none).
    URL_FIELD = ""
    SECRET_FIELDS: tuple[str, ...] = ()

    def clear_secrets_if_moved(self, old_url: str, sent: set[str]) -> list[str]:
        """Clear the secrets a URL change would send elsewhere, unless sent again with
        the change; the names of the fields cleared."""
        if not self.URL_FIELD or not moved(old_url, getattr(self, self.URL_FIELD)):
            return []
        cleared = []
        for name in self.SECRET_FIELDS:
            field = self._meta.get_field(name)
            assert isinstance(field, models.Field)
            empty = field.get_default()
            if name not in sent and getattr(self, name) != empty:
                setattr(self, name, empty)
                cleared.append(name)
        return cleared

    def forget_on_change(self, changed: list[str]) -> list[str]:
        """Reset what a change of `changed` fields makes stale; the fields reset."""
        return []

    def base_dict(self) -> dict[str, Any]:
        return {"id": self.key, "name": self.name or self.key, "project_id": self.project_id}


# The fields a row's ciphertexts are bound to: they never change once the row exists.
ROW_IDENTITY = ("project_id", "key")
DEFAULT_PORTS = {"http": 80, "https": 443}


def destination(url: str) -> tuple[str, str, int | None]:
    """Where a URL sends its secret: scheme, host and port (the default port filled in)."""
    try:
        parts = urlsplit(url or "")
        scheme = parts.scheme.lower()
        return scheme, (parts.hostname or "").lower(), parts.port or DEFAULT_PORTS.get(scheme)
    except ValueError:
        return "", url, None


def moved(old_url: str, new_url: str) -> bool:
    """Whether a URL change sends the resource's secret somewhere else."""
    return destination(old_url) != destination(new_url)


def secret_field() -> EncryptedTextField:
    return EncryptedTextField(blank=True, default="", bound_to=ROW_IDENTITY)


def _unique_key(model: str) -> list[models.BaseConstraint]:
    return [models.UniqueConstraint(fields=["project", "key"], name=f"{model}_unique_key")]


class ModelEndpoint(ProjectResource):
    """An OpenAI-compatible chat model served by some endpoint, with its prices."""

    base_url = models.URLField(max_length=500)
    model_name = models.CharField(max_length=200)
    secret = secret_field()
    price_prompt_per_1k = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    price_completion_per_1k = models.DecimalField(max_digits=12, decimal_places=6, default=0)

    URL_FIELD = "base_url"
    SECRET_FIELDS = ("secret",)

    class Meta:
        constraints = _unique_key("model")


class Function(ProjectResource):
    """A webhook tool the gateway calls with its own secret (built-in tools need no row)."""

    url = models.URLField(max_length=500)
    secret = secret_field()

    URL_FIELD = "url"
    SECRET_FIELDS = ("secret",)

    class Meta:
        constraints = _unique_key("function")


class ApiConnection(ProjectResource):
    base_url = models.URLField(max_length=500)
    # {"Authorization": "Bearer ..."}: sent by the gateway, never shown back.
    secret_headers = EncryptedJSONField(default=dict, blank=True, bound_to=ROW_IDENTITY)
    allowed_methods = models.JSONField(default=list, blank=True)
    # Path prefixes below base_url a run may call, e.g. ["/v1/orders"]; empty: any.
    allowed_paths = models.JSONField(default=list, blank=True)

    URL_FIELD = "base_url"
    SECRET_FIELDS = ("secret_headers",)

    class Meta:
        constraints = _unique_key("connection")


class McpServer(ProjectResource):
    """An MCP server (streamable HTTP) whose listed tools are functions named
    `mcp:<key>/<tool>` (kionga.mcp_tools); the gateway calls them with its headers."""

    url = models.URLField(max_length=500)
    # {"Authorization": "Bearer ..."}: sent by the gateway, never shown back.
    secret_headers = EncryptedJSONField(default=dict, blank=True, bound_to=ROW_IDENTITY)
    # The last tools/list answer: [{"name", "description", "input_schema"}]; what
    # validation and calls accept (a project admin refreshes it).
    tools = models.JSONField(default=list, blank=True)
    tools_listed_at = models.DateTimeField(null=True, blank=True)

    URL_FIELD = "url"
    SECRET_FIELDS = ("secret_headers",)

    class Meta:
        constraints = _unique_key("mcp_server")

    def forget_on_change(self, changed: list[str]) -> list[str]:
        # Another URL may be another server: its tools are listed anew before use.
        if self.URL_FIELD not in changed or (not self.tools and not self.tools_listed_at):
            return []
        self.tools, self.tools_listed_at = [], None
        return ["tools", "tools_listed_at"]


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
