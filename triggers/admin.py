"""Admin for ops staff: agents' triggers, changed through the same actions as the API.

A trigger's name, enabled flag and (schedules) cron, time zone and input are edited on
its page; the form checks them as the API does and saves through `do_update` (beat's
row follows, audited). Actions enable, disable or delete the selected triggers (audited
each). Triggers are created by editors (API, canvas, CLI): a webhook's secret is shown
to its creator once and never here. Each page lists the turns the trigger started.

django-celery-beat's own pages (periodic tasks, crontabs, ...) are taken out of the
admin: a trigger's beat row is written from the trigger (triggers/schedules.py), and an
edit there would skip the checks and the audit, and be overwritten at the next change.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.contrib import admin, messages
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django_celery_beat import admin as _beat_admin  # noqa: F401  (registers its pages first)
from django_celery_beat.models import (
    ClockedSchedule,
    CrontabSchedule,
    IntervalSchedule,
    PeriodicTask,
    SolarSchedule,
)

from kionga.admin import ReadOnlyAdmin
from kionga.errors import APIError
from triggers.actions import do_delete, do_update
from triggers.models import Firing, Trigger
from triggers.schedules import check_cron, check_timezone

EDITABLE = ("name", "enabled", "cron", "timezone", "input")

for beat_model in (PeriodicTask, CrontabSchedule, IntervalSchedule, SolarSchedule,
                   ClockedSchedule):
    if admin.site.is_registered(beat_model):
        admin.site.unregister(beat_model)


class TriggerForm(forms.ModelForm):  # type: ignore[type-arg]
    class Meta:
        model = Trigger
        fields = list(EDITABLE)

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean() or {}
        if self.instance.kind != Trigger.Kind.SCHEDULE:
            return cleaned
        for name, check in (("cron", check_cron), ("timezone", check_timezone)):
            try:
                check(cleaned.get(name, ""))
            except APIError as exc:
                self.add_error(name, exc.message)
        return cleaned


@admin.register(Trigger)
class TriggerAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    form = TriggerForm
    list_display = ["name", "kind", "agent", "enabled", "cron", "timezone", "updated_at"]
    list_filter = ["kind", "enabled", "project"]
    list_select_related = ["agent"]
    search_fields = ["name", "agent__name", "id"]
    readonly_fields = ["id", "kind", "agent", "project", "created_by", "created_at",
                       "updated_at", "turns"]
    actions = ["enable", "disable", "delete_triggers"]

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        editable = list(EDITABLE) if obj is not None and obj.kind == Trigger.Kind.SCHEDULE \
            else ["name", "enabled"]
        return ["id", "kind", "agent", *editable, "created_by", "created_at", "updated_at",
                "turns"]  # never the secret

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # the action below deletes through do_delete (audited)

    def save_model(self, request: HttpRequest, obj: Trigger, form: Any, change: bool) -> None:
        assert isinstance(request.user, User)
        stored = Trigger.objects.select_related("agent__project", "periodic_task").get(
            pk=obj.pk)
        do_update(request.user, stored, {name: form.cleaned_data[name]
                                         for name in form.changed_data if name in EDITABLE})

    @admin.action(description="Enable the selected triggers")
    def enable(self, request: HttpRequest, queryset: QuerySet[Trigger]) -> None:
        self._set_enabled(request, queryset, True)

    @admin.action(description="Disable the selected triggers")
    def disable(self, request: HttpRequest, queryset: QuerySet[Trigger]) -> None:
        self._set_enabled(request, queryset, False)

    @admin.action(description="Delete the selected triggers (their turns stay)")
    def delete_triggers(self, request: HttpRequest, queryset: QuerySet[Trigger]) -> None:
        assert isinstance(request.user, User)
        found = list(queryset.select_related("agent__project"))
        for trigger in found:
            do_delete(request.user, trigger)
        self.message_user(request, f"{len(found)} trigger(s) deleted.", messages.SUCCESS)

    def _set_enabled(self, request: HttpRequest, queryset: QuerySet[Trigger],
                     enabled: bool) -> None:
        assert isinstance(request.user, User)
        found = list(queryset.select_related("agent__project", "periodic_task"))
        for trigger in found:
            do_update(request.user, trigger, {"enabled": enabled})
        self.message_user(request, f"{len(found)} trigger(s) "
                          f"{'enabled' if enabled else 'disabled'}.", messages.SUCCESS)

    @admin.display(description="Latest turns")
    def turns(self, trigger: Trigger) -> str:
        firings = Firing.objects.filter(trigger=trigger).select_related("turn")[:20]
        rows = format_html_join(
            "", '<tr><td>{}</td><td><code>{}</code></td><td><a href="{}">{}</a></td>'
                "<td>{}</td></tr>",
            ((f.created_at.strftime("%Y-%m-%d %H:%M:%S"), f.delivery_id,
              reverse("admin:runs_run_change", args=[f.turn_id]), f.turn_id, f.turn.status)
             for f in firings))
        everything = (f"{reverse('admin:runs_run_changelist')}?"
                      f"{urlencode({'agent__id__exact': trigger.agent_id})}")
        return format_html(
            "<table><thead><tr><th>When</th><th>Delivery</th><th>Turn</th><th>Status</th>"
            '</tr></thead><tbody>{}</tbody></table><a href="{}">all the agent\'s turns</a>',
            rows, everything)


@admin.register(Firing)
class FiringAdmin(ReadOnlyAdmin):
    """What started each triggered turn: the trigger and the delivery ID or due time."""

    list_display = ["created_at", "trigger", "delivery_id", "turn_link", "status"]
    list_filter = ["trigger__kind"]
    list_select_related = ["trigger", "turn"]
    search_fields = ["delivery_id", "turn__id", "trigger__name", "trigger__id"]
    fields = ["trigger", "delivery_id", "turn_link", "status", "created_at"]
    readonly_fields = ["turn_link", "status"]

    @admin.display(description="Turn")
    def turn_link(self, firing: Firing) -> str:
        return format_html('<a href="{}">{}</a>', reverse("admin:runs_run_change",
                                                          args=[firing.turn_id]), firing.turn_id)

    @admin.display(description="Status")
    def status(self, firing: Firing) -> str:
        return firing.turn.status
