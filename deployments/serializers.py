"""The deploy body: autoscaling, resources (Kubernetes quantities), require_evaluation."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers

from kionga.request_body import StrictBooleanField, StrictCharField, StrictIntegerField

# Kubernetes quantities as people write them: 250m, 0.5, 1, 128Mi, 1Gi.
QUANTITY = r"^[0-9]{1,6}(\.[0-9]{1,3})?(m|k|M|G|Ki|Mi|Gi)?$"
DEFAULT_AUTOSCALING = {"min_replicas": 1, "max_replicas": 3, "target_cpu_percent": 70}
DEFAULT_RESOURCES = {"requests": {"cpu": "100m", "memory": "128Mi"},
                     "limits": {"cpu": "500m", "memory": "256Mi"}}


class AutoscalingSerializer(serializers.Serializer):
    min_replicas = StrictIntegerField(min_value=1, max_value=20, default=1)
    max_replicas = StrictIntegerField(min_value=1, max_value=50, default=3)
    target_cpu_percent = StrictIntegerField(min_value=10, max_value=95, default=70)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["max_replicas"] < attrs["min_replicas"]:
            raise serializers.ValidationError({"max_replicas": ["Must be at least min_replicas."]})
        return attrs


class QuantitiesSerializer(serializers.Serializer):
    cpu = StrictCharField(max_length=16)
    memory = StrictCharField(max_length=16)

    def validate_cpu(self, value: str) -> str:
        return _quantity(value)

    def validate_memory(self, value: str) -> str:
        return _quantity(value)


def _quantity(value: str) -> str:
    import re

    if not re.fullmatch(QUANTITY, value) or float(re.sub(r"[^0-9.]", "", value)) <= 0:
        raise serializers.ValidationError("A positive Kubernetes quantity, e.g. 250m or 128Mi.")
    return value


class ResourcesSerializer(serializers.Serializer):
    requests = QuantitiesSerializer(default=DEFAULT_RESOURCES["requests"])
    limits = QuantitiesSerializer(default=DEFAULT_RESOURCES["limits"])


class DeploySerializer(serializers.Serializer):
    autoscaling = AutoscalingSerializer(default=DEFAULT_AUTOSCALING)
    resources = ResourcesSerializer(default=DEFAULT_RESOURCES)
    require_evaluation = StrictBooleanField(
        default=False, help_text="Refuse (409 quality_gate) unless the version carries a "
                                 "passing evaluation summary.")
