"""Operations dashboards in the admin: per project and per deployed agent (ops staff).

Each list links to its dashboards; a dashboard replaces the change page: figures of the
chosen window (?hours=1, 6, 24, 72 or 168), charts per bucket (latency percentiles,
requests and errors, error rate, tokens, cost), the same figures as a table, and links
to the failing runs in the runs admin. Read-only, like every ops page.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html

from kionga.admin import ReadOnlyAdmin
from operations.dashboard import agent_dashboard, hours_of, project_dashboard
from operations.models import AgentOperations, ProjectOperations

TEMPLATE = "admin/operations/dashboard.html"


class DashboardAdmin(ReadOnlyAdmin):
    """A list of the objects; each one's page is its dashboard."""

    def dashboard(self, obj: Any, hours: int) -> dict[str, Any]:
        raise NotImplementedError

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> HttpResponse:
        obj = self.get_object(request, unquote(object_id))
        if obj is None:
            raise Http404(f"No {self.opts.verbose_name} with this ID.")
        if not self.has_view_permission(request, obj):
            raise PermissionDenied
        hours = hours_of(request.GET.get("hours"))
        context = {**self.admin_site.each_context(request), "opts": self.opts,
                   "original": obj, "title": f"Operations: {obj}", "subject": obj,
                   "kind": self.opts.verbose_name, **self.dashboard(obj, hours)}
        return TemplateResponse(request, TEMPLATE, context)

    @admin.display(description="Dashboard")
    def dashboard_link(self, obj: Any) -> str:
        url = reverse(f"admin:{self.opts.app_label}_{self.opts.model_name}_change",
                      args=[obj.pk])
        return format_html('<a href="{}">operations</a>', url)


@admin.register(ProjectOperations)
class ProjectOperationsAdmin(DashboardAdmin):
    list_display = ["name", "slug", "dashboard_link"]
    search_fields = ["name", "slug"]

    def dashboard(self, obj: Any, hours: int) -> dict[str, Any]:
        return project_dashboard(obj, hours)


@admin.register(AgentOperations)
class AgentOperationsAdmin(DashboardAdmin):
    list_display = ["name", "project", "design", "version", "updated_at", "dashboard_link"]
    list_filter = ["project"]
    list_select_related = ["project", "design", "version"]
    search_fields = ["name", "id"]

    def dashboard(self, obj: Any, hours: int) -> dict[str, Any]:
        return agent_dashboard(obj, hours)
