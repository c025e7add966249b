"""Admin pages for platform resources. Secrets are write-only: shown masked, never echoed."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin

from kionga import audit
from kionga.egress import configured_url_refusal
from kionga.resource_models import (
    ApiConnection,
    Dataset,
    DatasetObject,
    Function,
    KnowledgeBase,
    KnowledgeDocument,
    McpServer,
    ModelEndpoint,
)


class SecretInput(forms.PasswordInput):
    """Never renders the stored value; an empty submit keeps the old secret."""

    def __init__(self) -> None:
        super().__init__(render_value=False, attrs={"placeholder": "unchanged"})


class ResourceAdmin(admin.ModelAdmin):
    """Every resource belongs to one project: its pages filter by it."""

    list_filter = ["project"]


class MovedSecretForm(forms.ModelForm):
    """A URL change to another scheme, host or port clears the secrets not submitted
    with it (ProjectResource.clear_secrets_if_moved), audited like the API's."""

    def sent_secrets(self) -> set[str]:
        return set()

    def save(self, commit: bool = True) -> Any:
        obj = self.instance
        cleared: list[str] = []
        if obj.pk and obj.URL_FIELD:
            old_url = type(obj)._default_manager.values_list(
                obj.URL_FIELD, flat=True).get(pk=obj.pk)
            cleared = obj.clear_secrets_if_moved(old_url, self.sent_secrets())
        saved = super().save(commit)
        if cleared:
            audit.record("resource.secret_cleared", project=obj.project,
                         target_type=obj._meta.model_name or "", target_id=obj.key,
                         details={"fields": sorted(cleared), "reason": "destination_changed",
                                  "via": "admin"})
        return saved


class KeepSecretForm(MovedSecretForm):
    SECRET_FIELDS: tuple[str, ...] = ("secret",)

    def sent_secrets(self) -> set[str]:
        return {name for name in self.SECRET_FIELDS
                if self.data.get(self.add_prefix(name)) not in ("", None)}

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean() or {}
        for name in self.SECRET_FIELDS:
            if name in cleaned and cleaned[name] in ("", None) and self.instance.pk:
                cleaned[name] = getattr(self.instance, name)
        return cleaned


def check_egress(url: str) -> None:
    """The egress policy the API applies to the same URLs (kionga.egress)."""
    refusal = configured_url_refusal(url) if url else None
    if refusal:
        raise forms.ValidationError(refusal)


def https_url() -> forms.URLField:
    # A URL typed without a scheme means https (Django 6's default, chosen now). Each
    # resource form declares its URL with this (the admin's formfield_overrides would
    # come too late: a ModelForm makes its fields, and warns, when its class is made).
    return forms.URLField(max_length=500, assume_scheme="https", validators=[check_egress])


class ModelEndpointForm(KeepSecretForm):
    base_url = https_url()
    class Meta:
        model = ModelEndpoint
        fields = "__all__"
        widgets = {"secret": SecretInput()}


class FunctionForm(KeepSecretForm):
    url = https_url()
    class Meta:
        model = Function
        fields = "__all__"
        widgets = {"secret": SecretInput()}


@admin.register(ModelEndpoint)
class ModelEndpointAdmin(ResourceAdmin):
    form = ModelEndpointForm
    list_display = ["key", "project", "model_name", "base_url", "price_prompt_per_1k",
                    "price_completion_per_1k"]


@admin.register(Function)
class FunctionAdmin(ResourceAdmin):
    form = FunctionForm
    list_display = ["key", "project", "url"]


class SecretHeadersForm(MovedSecretForm):
    """A resource whose secret is its headers: replaced as a whole, never shown back."""

    new_secret_headers = forms.JSONField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3, "placeholder": "unchanged"}),
        help_text='JSON object, e.g. {"Authorization": "Bearer ..."}; empty keeps the old.',
    )

    def clean_new_secret_headers(self) -> Any:
        value = self.cleaned_data.get("new_secret_headers")
        if value in (None, "", {}):
            return None
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise forms.ValidationError("A JSON object of header names to string values.")
        return value

    def sent_secrets(self) -> set[str]:
        sent = self.cleaned_data.get("new_secret_headers") is not None
        return {"secret_headers"} if sent else set()

    def save(self, commit: bool = True) -> Any:
        headers = self.cleaned_data.get("new_secret_headers")
        if headers is not None:
            self.instance.secret_headers = headers
        return super().save(commit)


class ApiConnectionForm(SecretHeadersForm):
    base_url = https_url()

    class Meta:
        model = ApiConnection
        exclude = ["secret_headers"]


@admin.register(ApiConnection)
class ApiConnectionAdmin(ResourceAdmin):
    form = ApiConnectionForm
    list_display = ["key", "project", "base_url", "allowed_methods"]


class McpServerForm(SecretHeadersForm):
    url = https_url()

    class Meta:
        model = McpServer
        # The listing comes from the server (the API's tools route), never typed.
        exclude = ["secret_headers", "tools", "tools_listed_at"]

    def save(self, commit: bool = True) -> Any:
        if self.instance.pk and "url" in self.changed_data:
            self.instance.forget_on_change(["url"])
        return super().save(commit)


@admin.register(McpServer)
class McpServerAdmin(ResourceAdmin):
    form = McpServerForm
    list_display = ["key", "project", "url", "tools_listed_at"]
    readonly_fields = ["tool_names", "tools_listed_at"]

    @admin.display(description="Tools")
    def tool_names(self, obj: McpServer) -> str:
        tools = obj.tools if isinstance(obj.tools, list) else []
        return ", ".join(str(t.get("name")) for t in tools if isinstance(t, dict)) or "-"


class KnowledgeDocumentInline(admin.StackedInline):
    model = KnowledgeDocument
    extra = 0


@admin.register(KnowledgeBase)
class KnowledgeBaseAdmin(ResourceAdmin):
    list_display = ["key", "project", "name"]
    inlines = [KnowledgeDocumentInline]


class DatasetObjectInline(admin.TabularInline):
    model = DatasetObject
    extra = 0


@admin.register(Dataset)
class DatasetAdmin(ResourceAdmin):
    list_display = ["key", "project", "name"]
    inlines = [DatasetObjectInline]
