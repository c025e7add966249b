"""Admin for ops staff: approval requests, read-only (people decide in the approver UI)."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from approvals.models import ApprovalRequest


@admin.register(ApprovalRequest)
class ApprovalRequestAdmin(admin.ModelAdmin):
    # A decision made here would skip the role check and the audit event: read-only.
    list_display = ["created_at", "project", "status", "node_id", "run", "decided_by",
                    "expires_at"]
    list_filter = ["status", "project"]
    search_fields = ["id", "node_id", "message", "run__id"]
    date_hierarchy = "created_at"

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> list[str]:
        return [field.name for field in ApprovalRequest._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
