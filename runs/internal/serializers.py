"""Request bodies of the internal routes (runner/resources.py's contract), declared once.

They validate at the view and document the routes; what depends on the resource (the
methods a connection allows, a path staying below its base URL) stays in checks.py.
"""

from __future__ import annotations

from rest_framework import serializers

from kionga.request_body import StrictCharField, StrictIntegerField

ROLES = ("system", "user", "assistant")
METHODS = ("DELETE", "GET", "HEAD", "PATCH", "POST", "PUT")
MAX_MESSAGES = 1000
MAX_QUERY = 1000
MAX_PATH = 2000
MAX_SEARCH_LIMIT = 20
DEFAULT_SEARCH_LIMIT = 4


class MessageSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=ROLES)
    content = StrictCharField(allow_blank=True)


class PredictSerializer(serializers.Serializer):
    messages = serializers.ListField(child=MessageSerializer(), min_length=1,
                                     max_length=MAX_MESSAGES)


class InvokeSerializer(serializers.Serializer):
    input = serializers.JSONField(allow_null=True, default=None,
                                  help_text="Any JSON value, or a string for text input.")


class ConnectionCallSerializer(serializers.Serializer):
    method = StrictCharField(help_text=f"One of {', '.join(METHODS)} (any case).")
    path = StrictCharField(max_length=MAX_PATH, help_text="Below the base URL; starts with '/'.")
    body = serializers.JSONField(allow_null=True, default=None)

    def validate_method(self, value: str) -> str:
        if value.upper() not in METHODS:
            raise serializers.ValidationError(f"Must be one of {', '.join(METHODS)}.")
        return value.upper()

    def validate_path(self, value: str) -> str:
        if not value.startswith("/"):
            raise serializers.ValidationError("Must start with '/'.")
        return value


class SearchSerializer(serializers.Serializer):
    query = StrictCharField(max_length=MAX_QUERY)
    limit = StrictIntegerField(min_value=1, max_value=MAX_SEARCH_LIMIT,
                               default=DEFAULT_SEARCH_LIMIT)
