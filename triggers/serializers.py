"""Bodies of the triggers routes."""

from __future__ import annotations

from rest_framework import serializers

from kionga.request_body import ClosedSerializer, StrictBooleanField, StrictCharField
from triggers.models import Trigger
from triggers.schedules import MAX_CRON

MAX_SCHEDULE_INPUT = 10_000


class UpdateTriggerSerializer(ClosedSerializer):
    name = StrictCharField(max_length=100, required=False)
    enabled = StrictBooleanField(required=False)
    cron = StrictCharField(max_length=MAX_CRON, required=False, help_text=(
        "Schedules: minute hour day-of-month month day-of-week, e.g. '0 9 * * mon-fri'. "
        "All five fields must match (celery's crontab)."))
    timezone = StrictCharField(max_length=64, required=False,
                               help_text="Schedules: an IANA time zone (default UTC).")
    input = StrictCharField(max_length=MAX_SCHEDULE_INPUT, allow_blank=True, required=False,
                            help_text="Schedules: the input of each turn.")


class CreateTriggerSerializer(UpdateTriggerSerializer):
    kind = serializers.ChoiceField(choices=Trigger.Kind.choices)
    name = StrictCharField(max_length=100)
