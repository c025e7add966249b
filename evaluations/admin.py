"""Admin for ops staff: evaluations with their per-case results, judge scores and
reviews; and each design's test cases. Read-only: a result is a record of what
happened, and a review written here would skip the role check and the audit event."""

from __future__ import annotations

from django.contrib import admin

from evaluations.models import Evaluation, EvaluationCase, Fixtures
from kionga.admin import ReadOnlyAdmin


class CaseInline(admin.TabularInline):  # type: ignore[type-arg]
    model = EvaluationCase
    extra = 0
    can_delete = False
    show_change_link = True
    readonly_fields = ("position", "case_id", "name", "status", "reason", "tool_accuracy",
                       "judge_scores", "review_status", "review_note", "reviewed_by", "run",
                       "judge_run")
    fields = readonly_fields

    def has_add_permission(self, request: object, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: object, obj: object = None) -> bool:
        return False


@admin.register(Evaluation)
class EvaluationAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "design", "project", "status", "passed", "gate",
                    "revision", "version_id", "judge_backend", "judge_model",
                    "judge_chosen_by", "created_by"]
    list_filter = ["status", "passed", "gate", "judge_chosen_by", "project"]
    search_fields = ["id", "design__name", "content_sha256", "version_id"]
    date_hierarchy = "created_at"
    inlines = [CaseInline]


@admin.register(EvaluationCase)
class EvaluationCaseAdmin(ReadOnlyAdmin):
    list_display = ["evaluation", "case_id", "name", "status", "tool_accuracy",
                    "review_status", "reviewed_by", "finished_at"]
    list_filter = ["status", "review_status"]
    search_fields = ["case_id", "name", "evaluation__id"]


@admin.register(Fixtures)
class FixturesAdmin(ReadOnlyAdmin):
    list_display = ["design", "revision", "updated_by", "updated_at"]
    search_fields = ["design__name"]
