"""Admin for ops staff: designs with their revisions, validation issues and pretty JSON."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from designs.gate_setting import Gate, gate_after, record_gate_change
from designs.models import Design, DesignRevision, Version
from designs.validation import revision_report
from kionga.admin import ReadOnlyAdmin


def pretty_json(value: Any) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False)
    return format_html('<pre style="max-height:40em;overflow:auto">{}</pre>', text)


class RevisionInline(admin.TabularInline):
    model = DesignRevision
    extra = 0
    fields = ["number", "author", "created_at"]
    readonly_fields = ["number", "author", "created_at"]
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class VersionInline(admin.TabularInline):
    # Versions are immutable: listed here, opened read-only (VersionAdmin).
    model = Version
    extra = 0
    fields = ("number", "content_sha256", "source_revision", "author", "created_at")
    readonly_fields = fields
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Design)
class DesignAdmin(admin.ModelAdmin):
    list_display = ["name", "project", "revision", "require_evaluation",
                    "require_evaluation_by_staff", "updated_at"]
    list_filter = ["project"]
    search_fields = ["name", "id"]
    readonly_fields = ["id", "revision", "require_evaluation_by_staff", "created_by",
                       "created_at", "updated_at", "validation_issues", "current_graph",
                       "runs_link", "designer_link"]
    fields = ["id", "project", "name", "description", "require_evaluation",
              "require_evaluation_by_staff", "revision", "created_by", "created_at",
              "updated_at", "designer_link", "runs_link", "validation_issues", "current_graph"]
    inlines = [RevisionInline, VersionInline]

    def save_model(self, request: HttpRequest, obj: Design, form: Any, change: bool) -> None:
        # Whoever saves here is staff: a gate switched on here is a staff gate, one
        # switched off here is off (designs.gate_setting), audited as through the API.
        stored = Design.objects.filter(pk=obj.pk).first() if change else None
        before = Gate.of(stored) if stored is not None else Gate(False, False)
        after = before
        if "require_evaluation" in form.changed_data or not change:
            after = gate_after(before, obj.require_evaluation, staff=True)
        obj.require_evaluation_by_staff = after.by_staff
        super().save_model(request, obj, form, change)
        record_gate_change(request.user, obj, before, after)

    @admin.display(description="Canvas")
    def designer_link(self, design: Design) -> str:
        # By URL name: the designer app serves the canvas page.
        if design.pk is None:
            return "-"
        return format_html('<a class="button" href="{}">Open in designer</a>',
                           reverse("designer:design", args=[design.pk]))

    @admin.display(description="Runs")
    def runs_link(self, design: Design) -> str:
        # By URL: the runs app sits above designs and registers its own page.
        if design.pk is None:
            return "-"
        url = reverse("admin:runs_run_changelist")
        return format_html('<a href="{}?design__id__exact={}">Runs of this design</a>',
                           url, design.pk)

    @admin.display(description="Validation issues")
    def validation_issues(self, design: Design) -> str:
        if design.pk is None:
            return "-"
        report = revision_report(design.current(), design.project)
        if not report.issues:
            return "No issues: runnable."
        rows = format_html_join(
            "", "<li><b>{}</b> {} <code>{}</code> {}</li>",
            ((i.severity, i.code, i.path or "", i.message) for i in report.issues),
        )
        state = "runnable" if report.runnable else "not runnable"
        return format_html("<p>{}</p><ul>{}</ul>", state, rows)

    @admin.display(description="Graph (current revision, normalized)")
    def current_graph(self, design: Design) -> str:
        if design.pk is None:
            return "-"
        report = revision_report(design.current(), design.project)
        return pretty_json(report.graph if report.graph is not None else design.current().graph)


@admin.register(DesignRevision)
class DesignRevisionAdmin(admin.ModelAdmin):
    # Revisions are history: never edited here.
    list_display = ["design", "number", "author", "created_at"]
    fields = ["design", "number", "author", "created_at", "graph_json"]
    readonly_fields = ["design", "number", "author", "created_at", "graph_json"]

    @admin.display(description="Graph as stored")
    def graph_json(self, revision: DesignRevision) -> str:
        return pretty_json(revision.graph)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Version)
class VersionAdmin(ReadOnlyAdmin):
    """Published versions, read-only: nothing here can change, add or delete one."""

    list_display = ["design", "number", "content_sha256", "author", "created_at"]
    list_filter = ["project"]
    search_fields = ["id", "design__name", "content_sha256"]
    fields = ("id", "design", "project", "number", "content_sha256", "source_revision",
              "notes", "author", "created_at", "artifact_json")
    readonly_fields = fields

    @admin.display(description="Artifact")
    def artifact_json(self, version: Version) -> str:
        return pretty_json(version.artifact)
