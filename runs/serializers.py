"""Request bodies of the runs API, declared once: they validate and they document."""

from __future__ import annotations

from rest_framework import serializers

from kionga.request_body import StrictBooleanField, StrictCharField, StrictIntegerField

MAX_INPUT_CHARS = 100_000
MAX_HISTORY_TURNS = 200
MAX_SESSION_ID = 200


class TurnSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["user", "assistant", "system"])
    content = StrictCharField(allow_blank=True)


class StartRunSerializer(serializers.Serializer):
    input = StrictCharField(max_length=MAX_INPUT_CHARS, allow_blank=True, default="")
    session_id = StrictCharField(max_length=MAX_SESSION_ID, allow_blank=True, allow_null=True,
                                 default=None)
    history = serializers.ListField(
        child=TurnSerializer(), max_length=MAX_HISTORY_TURNS, allow_null=True, default=None,
        help_text="Used as is; without it, a session_id brings the session's earlier turns.")
    allow_side_effects = StrictBooleanField(default=False)
    stop_after = StrictCharField(allow_blank=True, allow_null=True, default=None,
                                 help_text="The ID of a node of the graph to stop after.")
    revision = StrictIntegerField(min_value=1, allow_null=True, default=None,
                                  help_text="Defaults to the design's latest revision.")
    from_run = serializers.UUIDField(
        allow_null=True, default=None,
        help_text="Re-run: the ended run of this design whose recorded node outputs the "
                  "run repeats (its input too). With from_node.")
    from_node = StrictCharField(
        max_length=64, allow_blank=True, allow_null=True, default=None,
        help_text="Re-run: the node to run from; it and every node after it run again, "
                  "the others repeat their outputs recorded in from_run.")
