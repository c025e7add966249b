"""Admin for ops staff: approval requests, read-only (people decide in the approver UI)."""

from __future__ import annotations

from django.contrib import admin

from approvals.models import ApprovalRequest
from kionga.admin import ReadOnlyAdmin


@admin.register(ApprovalRequest)
class ApprovalRequestAdmin(ReadOnlyAdmin):
    # A decision made here would skip the role check and the audit event: read-only.
    list_display = ["created_at", "project", "status", "node_id", "run", "decided_by",
                    "expires_at"]
    list_filter = ["status", "project"]
    search_fields = ["id", "node_id", "message", "run__id"]
    date_hierarchy = "created_at"
