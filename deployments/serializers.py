"""The deploy body: autoscaling, resources (Kubernetes quantities), require_evaluation.

Every object is closed (an unknown key is refused at its path) and each pod's requests
are at most its limits. The operator's ceilings (one pod, one project) are the deploy's
own check (deployments/ceilings.py): they hold for the defaults too.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any, Final

from rest_framework import serializers

from deployments.api_keys import DEFAULT_DAYS, DEFAULT_RATE, MAX_RATE
from kionga import quantities
from kionga.request_body import (
    ClosedSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
)

DEFAULT_AUTOSCALING = {"min_replicas": 1, "max_replicas": 3, "target_cpu_percent": 70}
DEFAULT_RESOURCES = {"requests": {"cpu": "100m", "memory": "128Mi"},
                     "limits": {"cpu": "500m", "memory": "256Mi"}}
# Each resource and how its quantity reads (cores, bytes).
RESOURCE_KINDS: Final[dict[str, Callable[[str], Decimal]]] = {
    "cpu": quantities.cpu, "memory": quantities.memory}


class AutoscalingSerializer(ClosedSerializer):
    min_replicas = StrictIntegerField(min_value=1, max_value=20, default=1)
    max_replicas = StrictIntegerField(min_value=1, max_value=50, default=3)
    target_cpu_percent = StrictIntegerField(min_value=10, max_value=95, default=70)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if attrs["max_replicas"] < attrs["min_replicas"]:
            raise serializers.ValidationError({"max_replicas": ["Must be at least min_replicas."]})
        return attrs


class QuantitiesSerializer(ClosedSerializer):
    cpu = StrictCharField(max_length=16)
    memory = StrictCharField(max_length=16)

    def validate_cpu(self, value: str) -> str:
        return _quantity("cpu", value)

    def validate_memory(self, value: str) -> str:
        return _quantity("memory", value)


def _quantity(kind: str, value: str) -> str:
    try:
        RESOURCE_KINDS[kind](value)
    except ValueError as exc:
        raise serializers.ValidationError(f"{exc}.") from None
    return value


class ResourcesSerializer(ClosedSerializer):
    requests = QuantitiesSerializer(default=DEFAULT_RESOURCES["requests"])
    limits = QuantitiesSerializer(default=DEFAULT_RESOURCES["limits"])

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # A request above its limit: Kubernetes refuses the pod, long after the deploy
        # answered (the Deployment is accepted, its ReplicaSet never makes a pod).
        above = {kind: [f"{attrs['requests'][kind]} is more than limits.{kind} "
                        f"({attrs['limits'][kind]})."]
                 for kind, read in RESOURCE_KINDS.items()
                 if read(attrs["requests"][kind]) > read(attrs["limits"][kind])}
        if above:
            raise serializers.ValidationError({"requests": above})
        return attrs


class DeploySerializer(ClosedSerializer):
    autoscaling = AutoscalingSerializer(default=DEFAULT_AUTOSCALING)
    resources = ResourcesSerializer(default=DEFAULT_RESOURCES)
    require_evaluation = StrictBooleanField(
        default=False, help_text="Refuse (409 quality_gate) unless the version carries a "
                                 "passing evaluation summary.")
    # The range is the canary's rule (deployments/canary.py: 422 invalid_canary_percent).
    canary_percent = StrictIntegerField(
        required=False, allow_null=True, default=None,
        help_text="1 to 99: the version becomes the agent's canary, serving this share of "
                  "turns (sticky per session_id) while the agent keeps its version.")


class CreateApiKeySerializer(ClosedSerializer):
    name = StrictCharField(max_length=100)
    rate_per_minute = StrictIntegerField(
        min_value=1, max_value=MAX_RATE, default=DEFAULT_RATE,
        help_text="Requests a minute this key may make (sliding window); beyond, 429 "
                  "with Retry-After.")
    expires_at = serializers.DateTimeField(
        required=False, allow_null=True, default=None,
        help_text=f"In the future; omitted or null: {DEFAULT_DAYS} days from now.")
