"""Request bodies of the designs API, declared once: they validate and they document.

The graph itself is passed on as JSON: contracts/ validates it, with its own issue
model (a draft may be wrong in any way and still be saved).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from designs.openapi import GRAPH
from designs.publish import MAX_NOTES_CHARS
from kionga.request_body import StrictBooleanField, StrictCharField, StrictIntegerField

MAX_NAME = 200
MAX_DESCRIPTION = 10_000


@extend_schema_field(GRAPH)
class GraphField(serializers.JSONField):
    """A graph document, checked by designs.actions.check_graph_document (contracts)."""


class CreateDesignSerializer(serializers.Serializer):
    # 1 or "1" (Decisions: project IDs); membership is checked by the view.
    project_id = serializers.IntegerField()
    name = StrictCharField(max_length=MAX_NAME)
    description = StrictCharField(max_length=MAX_DESCRIPTION, required=False, allow_blank=True,
                                  allow_null=True)
    graph = GraphField(required=False, allow_null=True)
    require_evaluation = StrictBooleanField(
        required=False, default=False,
        help_text="Publishing needs a passing evaluation of every case (the quality gate).")


class SaveDesignSerializer(serializers.Serializer):
    revision = StrictIntegerField(help_text="The revision you read; a stale one is 409.")
    graph = GraphField(required=False,
                       help_text="Saves the next revision. Without it, only the fields sent "
                                 "change, and the revision stays.")
    name = StrictCharField(max_length=MAX_NAME, required=False, allow_null=True)
    description = StrictCharField(max_length=MAX_DESCRIPTION, required=False, allow_blank=True,
                                  allow_null=True)
    require_evaluation = StrictBooleanField(
        required=False, allow_null=True, default=None,
        help_text="Publishing needs a passing evaluation of every case (the quality gate). "
                  "Changing it makes no revision.")


class PublishSerializer(serializers.Serializer):
    revision = StrictIntegerField(min_value=1, max_value=2**31 - 1,
                                  help_text="The revision you read and publish.")
    notes = StrictCharField(required=False, allow_blank=True, default="",
                            max_length=MAX_NOTES_CHARS)
    evaluation_id = StrictCharField(required=False, allow_null=True, default=None,
                                    max_length=200,
                                    help_text="The evaluation that gates this publish.")


class RestoreRevisionSerializer(serializers.Serializer):
    revision = StrictIntegerField(help_text="The revision you read; a stale one is 409.")


class SetPinSerializer(serializers.Serializer):
    port = StrictCharField(max_length=64,
                           help_text="The node's output port the value stands for.")
    value = serializers.JSONField(
        allow_null=True,
        help_text="The output, typed by the port (text: a string; chat: turns; documents: "
                  "objects with text; json: any value), at most 64 KiB of JSON.")
