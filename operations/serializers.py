"""Query parameters of the metrics routes."""

from __future__ import annotations

from rest_framework import serializers

MAX_HOURS = 168


class OperationsQuery(serializers.Serializer):
    hours = serializers.IntegerField(min_value=1, max_value=MAX_HOURS, default=24)


class OverviewQuery(serializers.Serializer):
    project_id = serializers.IntegerField()
