"""Request bodies of the approval routes, declared once: they validate and they document."""

from __future__ import annotations

from rest_framework import serializers

from approvals.actions import DECISIONS
from approvals.listing import MAX_PAGE_SIZE, PAGE_SIZE
from approvals.models import ApprovalRequest
from kionga.request_body import StrictCharField, StrictIntegerField

MIN_TIMEOUT_SECONDS, MAX_TIMEOUT_SECONDS = 10, 290
MAX_TEXT = 2000  # message and preview arrive redacted and truncated to 2,000 characters
MAX_NODE_ID = 200


class NewApprovalSerializer(serializers.Serializer):
    """POST agent-approvals (internal listener): the run is the credential's."""

    node_id = StrictCharField(max_length=MAX_NODE_ID)
    message = StrictCharField(max_length=MAX_TEXT)
    preview = StrictCharField(max_length=MAX_TEXT, allow_blank=True, default="")
    timeout_seconds = StrictIntegerField(min_value=MIN_TIMEOUT_SECONDS,
                                         max_value=MAX_TIMEOUT_SECONDS)


class DecisionSerializer(serializers.Serializer):
    decision = serializers.ChoiceField(choices=list(DECISIONS))
    comment = StrictCharField(max_length=MAX_TEXT, allow_blank=True, allow_null=True,
                              default="")


class ApprovalListQuerySerializer(serializers.Serializer):
    """GET agent-approvals: query parameters (strings, as every query parameter is)."""

    status = serializers.ChoiceField(choices=list(ApprovalRequest.Status.values),
                                     required=False)
    project_id = serializers.IntegerField(min_value=1, required=False)
    run_id = serializers.UUIDField(required=False)
    before = serializers.UUIDField(required=False, help_text=(
        "The last request of the previous page (its next_before)."))
    limit = serializers.IntegerField(min_value=1, max_value=MAX_PAGE_SIZE, default=PAGE_SIZE)
