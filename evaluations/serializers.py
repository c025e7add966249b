"""Request bodies of the evaluations API, declared once: they validate and they document.

Limits of test cases are declared here (the input's in contracts.suggest, which builds
inputs too); a whole body also stays under the platform's body ceiling.
"""

from __future__ import annotations

from typing import Any, Final

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from contracts.registry import LIMITS
from contracts.suggest import MAX_CASE_NAME, MAX_SUGGESTED_INPUT
from evaluations.models import REVIEW_STATUSES
from evaluations.openapi import APPROVALS
from kionga.request_body import (
    ClosedSerializer,
    StrictBooleanField,
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
)
from runner.request import APPROVAL_DECISIONS, DEFAULT_APPROVAL_DECISION
from runs.serializers import TurnSerializer  # a case's history is a run's

MAX_CASES: Final = 100
MAX_CASE_INPUT_CHARS: Final = MAX_SUGGESTED_INPUT
MAX_CASE_ID: Final = 64
MAX_TAGS: Final = 10
MAX_TAG_CHARS: Final = 50
MAX_CALLS: Final = 100
MAX_HISTORY_TURNS: Final = 20
MAX_REFERENCE_CHARS: Final = 8_000
CRITERIA: Final = ("groundedness", "task_completion", "relevance", "safety")
DEFAULT_MIN_SCORE: Final = 0.7
CASE_ID_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$"
MAX_NODES: Final = LIMITS["max_nodes"]  # a case's approvals name at most every node


class JudgeSerializer(serializers.Serializer):
    criteria = serializers.ListField(child=serializers.ChoiceField(choices=CRITERIA),
                                     min_length=1, max_length=len(CRITERIA))
    reference = StrictCharField(required=False, allow_blank=True, allow_null=True,
                                max_length=MAX_REFERENCE_CHARS)
    min_score = StrictFloatField(required=False, default=DEFAULT_MIN_SCORE,
                                 min_value=0.0, max_value=1.0)

    def validate_criteria(self, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise serializers.ValidationError("A criterion is listed twice.")
        return value


class ExpectedSerializer(serializers.Serializer):
    calls = serializers.ListField(child=StrictCharField(max_length=MAX_CASE_ID),
                                  required=False, default=list, max_length=MAX_CALLS,
                                  help_text="Node IDs of the design's saved graph that must "
                                            "complete.")
    judge = JudgeSerializer(required=False, allow_null=True, default=None)


APPROVALS_HELP: Final = (
    'How the graph\'s approval nodes resolve in this case (an evaluation never asks '
    'people): "approve" or "reject" for all of them, or an object mapping approval node '
    'IDs (or subflow, map and loop nodes, for the approvals of the versions they run) to '
    f'"approve" or "reject", the others approving. Default "{DEFAULT_APPROVAL_DECISION}".')
_DECISION_WORDS: Final = " or ".join(f'"{d}"' for d in APPROVAL_DECISIONS)


@extend_schema_field(APPROVALS)
class ApprovalsField(serializers.Field):
    """A case's `approvals`: one decision for every approval node, or one per node."""

    default_error_messages = {
        "invalid": f"Must be {_DECISION_WORDS}, or an object mapping node IDs to one of them.",
        "decision": f"Must be {_DECISION_WORDS}.",
        "too_many": f"At most {MAX_NODES} nodes.",
    }

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("required", False)
        kwargs.setdefault("default", DEFAULT_APPROVAL_DECISION)
        kwargs.setdefault("help_text", APPROVALS_HELP)
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> str | dict[str, str]:
        if isinstance(data, str) and data in APPROVAL_DECISIONS:
            return data
        if not isinstance(data, dict):
            self.fail("invalid")
        if len(data) > MAX_NODES:
            self.fail("too_many")
        wrong = {key: [self.error_messages["decision"]] for key, value in data.items()
                 if value not in APPROVAL_DECISIONS}
        if wrong:
            raise serializers.ValidationError(wrong)
        return {str(key): str(value) for key, value in data.items()}

    def to_representation(self, value: Any) -> Any:
        return value


class CaseSerializer(serializers.Serializer):
    id = serializers.RegexField(CASE_ID_PATTERN, required=False, allow_null=True, default=None,
                                help_text="Stable; the server assigns one when missing.")
    name = StrictCharField(max_length=MAX_CASE_NAME)
    input = StrictCharField(allow_blank=True, max_length=MAX_CASE_INPUT_CHARS)
    history = serializers.ListField(child=TurnSerializer(), required=False, default=list,
                                    max_length=MAX_HISTORY_TURNS)
    tags = serializers.ListField(child=StrictCharField(max_length=MAX_TAG_CHARS),
                                 required=False, default=list, max_length=MAX_TAGS)
    expected = ExpectedSerializer(required=False, default=lambda: {"calls": [], "judge": None})
    approvals = ApprovalsField()

    def to_internal_value(self, data: Any) -> Any:
        # RegexField coerces numbers to text; an ID is a JSON string.
        if isinstance(data, dict) and data.get("id") is not None and not isinstance(
                data["id"], str):
            raise serializers.ValidationError({"id": ["Not a valid string."]})
        return super().to_internal_value(data)


class PutFixturesSerializer(serializers.Serializer):
    revision = StrictIntegerField(min_value=0, max_value=2**31 - 1,
                                  help_text="The fixtures revision you read (0 before any "
                                            "PUT); a stale one is 409.")
    cases = serializers.ListField(child=CaseSerializer(), max_length=MAX_CASES)


class SuggestSerializer(serializers.Serializer):
    phrase = StrictBooleanField(required=False, default=True,
                                help_text="Ask the model to rephrase the inputs (not done yet: "
                                          "phrased is always \"conditions\").")
    revision = StrictIntegerField(min_value=0, max_value=2**31 - 1, required=False,
                                  allow_null=True, default=None,
                                  help_text="The fixtures revision; needed with save.")

    def get_fields(self) -> dict[str, serializers.Field]:
        # `save` is the body's name for it, and also Serializer.save: add it by name.
        fields = super().get_fields()
        fields["save"] = StrictBooleanField(required=False, default=False,
                                            help_text="Store the proposals whose name is free.")
        return fields


MAX_REVIEW_NOTE_CHARS: Final = 4_000


class StartEvaluationSerializer(serializers.Serializer):
    gate = StrictBooleanField(required=False, default=False,
                              help_text="Run every case: a cases list that leaves one out is "
                                        "refused. Any evaluation that ran every case may "
                                        "open the quality gate, with or without gate.")
    version_id = serializers.UUIDField(required=False, allow_null=True, default=None,
                                       help_text="Evaluate this published version of the "
                                                 "design instead of a revision.")
    cases = serializers.ListField(child=StrictCharField(max_length=MAX_CASE_ID),
                                  required=False, allow_null=True, default=None,
                                  max_length=MAX_CASES, help_text="Case IDs; all by default.")
    allow_side_effects = StrictBooleanField(required=False, default=False)
    revision = StrictIntegerField(min_value=1, max_value=2**31 - 1, required=False,
                                  allow_null=True, default=None,
                                  help_text="Defaults to the design's latest revision.")


class ReviewSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=REVIEW_STATUSES)
    note = StrictCharField(required=False, allow_blank=True, default="",
                           max_length=MAX_REVIEW_NOTE_CHARS)


class OneCaseSerializer(ClosedSerializer, CaseSerializer):
    """The body of POST …/fixtures/cases and PUT …/fixtures/cases/{case_id}: one case,
    no other key. `input` may be left out with `from_run` (the run's input is taken)."""

    input = StrictCharField(allow_blank=True, max_length=MAX_CASE_INPUT_CHARS, required=False,
                            default=None)
    from_run = serializers.UUIDField(
        required=False, allow_null=True, default=None,
        help_text="A run of this design: the case's input is the run's (unless input is "
                  "given).")
    expect_output = StrictBooleanField(
        required=False, default=False,
        help_text="With from_run: the run's output becomes the expected answer "
                  "(expected.judge.reference; criteria task_completion unless "
                  "expected.judge names others).")
