"""Request bodies: each is declared once, as a DRF serializer of strict JSON fields.

The serializer validates the body at the view (``parse``) and drf-spectacular documents
it from the same class (``extend_schema(request=TheSerializer)``). Its errors reach the
client as 400 ``invalid_request`` with details ``{"fields": {path: [messages]}}``
(kionga.errors).

DRF's own fields coerce (``"5"`` is an integer, ``"yes"`` a boolean, ``3`` a string,
and strings are trimmed); a JSON API should take the types it documents, and store
text as sent. These fields do.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from rest_framework import serializers
from rest_framework.fields import empty
from rest_framework.utils.serializer_helpers import BindingDict


def parse(serializer: type[serializers.Serializer], data: Any) -> dict[str, Any]:
    """The validated body, or 400 invalid_request with the errors per field."""
    found = serializer(data=data)
    if _declared_only(serializer):
        # The fields, already bound (DRF deep-copies every declared field for each
        # instance, ~0.1 ms for a run start's body): nothing here gives a serializer a
        # context, an instance or `partial`, the only things a bound field reads of its
        # serializer, and validating a field changes nothing on it.
        found.__dict__["fields"] = _bound_fields(serializer)
    found.is_valid(raise_exception=True)
    return dict(found.validated_data)


def _declared_only(serializer: type[serializers.Serializer]) -> bool:
    """Its fields are its declared ones, the same for every instance (not a
    ModelSerializer's, nor a serializer that changes them per instance)."""
    return (serializer.get_fields is serializers.Serializer.get_fields
            and serializer.__init__ is serializers.BaseSerializer.__init__)


@functools.cache
def _bound_fields(serializer: type[serializers.Serializer]) -> BindingDict:
    """The fields of one instance of `serializer`, kept for every later parse."""
    fields: BindingDict = serializer().fields
    return fields


class ClosedSerializer(serializers.Serializer):
    """A JSON object whose keys are its fields and nothing else.

    DRF drops keys it does not know; a key sent by mistake (`gpu` in resources, `replica`
    for `max_replicas`) would then silently mean the default. Each unknown key is
    refused instead, at its path (``resources.limits.gpu``), as a 400 invalid_request.
    """

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, Mapping):
            unknown = sorted(str(key) for key in data if key not in self.fields)
            if unknown:
                allowed = ", ".join(self.fields)
                raise serializers.ValidationError(
                    {key: [f"Unknown field (allowed: {allowed})."] for key in unknown})
        return super().to_internal_value(data)


class StrictCharField(serializers.CharField):
    """A JSON string, kept as sent (not trimmed); blank = empty or only whitespace."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)

    def run_validation(self, data: Any = empty) -> Any:
        if isinstance(data, str) and data and not data.strip() and not self.allow_blank:
            self.fail("blank")
        return super().run_validation(data)

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return data


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer: not a string, a float or a boolean."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return data


class StrictBooleanField(serializers.BooleanField):
    """JSON true or false only."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class StrictFloatField(serializers.FloatField):
    """A JSON number (integer or not): not a string and not a boolean."""

    def to_internal_value(self, data: Any) -> float:
        if isinstance(data, bool) or not isinstance(data, (int, float)):
            self.fail("invalid")
        return float(super().to_internal_value(data))
