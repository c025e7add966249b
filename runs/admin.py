"""Admin for ops staff: runs with their input, output, error, usage, event timeline and
steps (each node attempt's record, linked to its own page: inputs, output, error).

Read-only: a run is a record of what happened; its events are shown on its page, not
editable anywhere. Approvals are linked by URL (the approvals app sits above runs).
"""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from kionga.admin import ReadOnlyAdmin
from kionga.notices import notice_urls
from runs.models import NodeRecord, Run
from runs.timeline import timeline as event_timeline


class FailureReasonFilter(admin.SimpleListFilter):
    """The error code of failed runs, as stored (runner failures and the gateway's own)."""

    title = "failure reason"
    parameter_name = "failure"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        codes = (Run.objects.filter(status=Run.Status.FAILED, error__code__isnull=False)
                 .values_list("error__code", flat=True).distinct())
        return [(str(code), str(code)) for code in sorted({str(c) for c in codes})]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Run]) -> QuerySet[Run]:
        if self.value():
            return queryset.filter(status=Run.Status.FAILED, error__code=self.value())
        return queryset


class VersionFilter(admin.SimpleListFilter):
    """Design runs (a revision) or runs of a published version, and which one."""

    title = "version"
    parameter_name = "version"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        versions = Run.objects.exclude(version_id="").values_list("version_id", flat=True)
        return [("none", "design revision"),
                *((v, v) for v in sorted(set(versions.distinct())))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Run]) -> QuerySet[Run]:
        value = self.value()
        if value == "none":
            return queryset.filter(version_id="")
        if value:
            return queryset.filter(version_id=value)
        return queryset


@admin.register(Run)
class RunAdmin(ReadOnlyAdmin):
    # Reads itself again on a run's notices (runs/static/runs/admin_runs.js).
    change_list_template = "admin/runs/run/change_list.html"
    list_display = ["id", "created_at", "project", "design", "status", "failure_reason",
                    "version_id", "tokens"]
    list_filter = ["project", ("design", admin.RelatedOnlyFieldListFilter), "status",
                   FailureReasonFilter, VersionFilter, "created_at"]
    search_fields = ["id"]  # a run ID, whole or in part
    date_hierarchy = "created_at"
    list_select_related = ["project", "design"]
    fields = ["id", "project", "design", "revision", "version_id", "content_sha256",
              "status", "created_by", "created_at", "started_at", "finished_at",
              "input", "output", "error_json", "usage", "approvals", "steps", "timeline",
              "from_run", "from_node", "session_id", "allow_side_effects", "stop_after",
              "resources"]
    readonly_fields = ["failure_reason", "error_json", "usage", "approvals", "steps",
                       "timeline"]

    def changelist_view(self, request: HttpRequest,
                        extra_context: dict[str, Any] | None = None) -> HttpResponse:
        return super().changelist_view(request, {**(extra_context or {}),
                                                 "notice_urls": notice_urls(request.user)})

    @admin.display(description="Failure reason")
    def failure_reason(self, run: Run) -> str:
        return str(run.error.get("code", "")) if isinstance(run.error, dict) else ""

    @admin.display(description="Error")
    def error_json(self, run: Run) -> str:
        if run.error is None:
            return "-"
        text = json.dumps(run.error, indent=2, ensure_ascii=False)
        return format_html("<pre>{}</pre>", text)

    @admin.display(description="Usage")
    def usage(self, run: Run) -> str:
        return f"{run.tokens} tokens, cost {run.cost}"

    @admin.display(description="Approvals")
    def approvals(self, run: Run) -> str:
        url = reverse("admin:approvals_approvalrequest_changelist")
        return format_html('<a href="{}?run__id__exact={}">Approval requests of this run</a>',
                           url, run.pk)

    @admin.display(description="Steps")
    def steps(self, run: Run) -> str:
        rows = NodeRecord.objects.filter(run=run).order_by("data__started_at", "node_id",
                                                            "attempt")
        if not rows:
            return "No node records stored."
        body = format_html_join("", '<tr><td><a href="{}">{}</a></td><td>{}</td><td>{}</td>'
                                "<td>{}</td><td>{}</td><td>{}</td></tr>",
                                ((reverse("admin:runs_noderecord_change", args=[r.pk]),
                                  r.node_id, r.attempt, r.status, r.tokens,
                                  (r.data.get("usage") or {}).get("cost", 0), r.duration_ms)
                                 for r in rows))
        return format_html('<table><thead><tr><th>node</th><th>attempt</th><th>status</th>'
                           '<th>tokens</th><th>cost</th><th>ms</th></tr></thead>'
                           '<tbody>{}</tbody></table>', body)

    @admin.display(description="Event timeline")
    def timeline(self, run: Run) -> str:
        rows = event_timeline(run)
        if not rows:
            return "No events stored."
        body = format_html_join("", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                                "<td>{}</td></tr>",
                                ((r.seq, r.type, r.node, r.since_start, r.preview)
                                 for r in rows))
        return format_html('<table><thead><tr><th>seq</th><th>type</th><th>node</th>'
                           '<th>since start</th><th>preview</th></tr></thead>'
                           '<tbody>{}</tbody></table>', body)


@admin.register(NodeRecord)
class NodeRecordAdmin(ReadOnlyAdmin):
    """One step of a run: what the node took and gave (redacted, bounded), as recorded."""

    list_display = ["run", "node_id", "attempt", "status", "tokens", "duration_ms"]
    search_fields = ["run__id", "node_id"]
    list_select_related = ["run"]
    fields = ["run_link", "node_id", "attempt", "status", "tokens", "duration_ms", "record"]
    readonly_fields = ["run_link", "record"]

    @admin.display(description="Run")
    def run_link(self, record: NodeRecord) -> str:
        return format_html('<a href="{}">{}</a>',
                           reverse("admin:runs_run_change", args=[record.run_id]), record.run_id)

    @admin.display(description="Record (inputs, output, error, times, usage)")
    def record(self, record: NodeRecord) -> str:
        return format_html("<pre>{}</pre>", json.dumps(record.data, indent=2, ensure_ascii=False))
