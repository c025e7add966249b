"""OpenAPI shapes of the evaluations API (documentation and the test client's checks)."""

from __future__ import annotations

from typing import Any

from evaluations.models import (
    CASE_STATUSES,
    EVALUATION_STATUSES,
    JUDGE_CHOSEN_BY,
    REVIEW_STATUSES,
)
from kionga.openapi import INTEGER, STRING, obj
from runner.request import APPROVAL_DECISIONS

_STRINGS: dict[str, Any] = {"type": "array", "items": STRING}
_NULLABLE_STRING: dict[str, Any] = {"type": ["string", "null"]}
JUDGE: dict[str, Any] = obj({"criteria": _STRINGS, "min_score": {"type": "number"}},
                            {"reference": _NULLABLE_STRING})
EXPECTED: dict[str, Any] = obj({"calls": _STRINGS},
                               {"judge": {**JUDGE, "type": ["object", "null"]}})
TURN: dict[str, Any] = obj({"role": STRING, "content": STRING})
_DECISION: dict[str, Any] = {"enum": list(APPROVAL_DECISIONS)}
APPROVALS: dict[str, Any] = {"anyOf": [_DECISION, {"type": "object",
                                                   "additionalProperties": _DECISION}]}
CASE: dict[str, Any] = obj({"id": STRING, "name": STRING, "input": STRING,
                            "history": {"type": "array", "items": TURN},
                            "tags": _STRINGS, "expected": EXPECTED}, {"approvals": APPROVALS})
FIXTURES: dict[str, Any] = obj({
    "design_id": STRING, "revision": INTEGER,
    "cases": {"type": "array", "items": CASE},
    "updated_at": _NULLABLE_STRING,
})
ONE_CASE: dict[str, Any] = obj({"design_id": STRING, "revision": INTEGER, "case": CASE})
DELETED_CASE: dict[str, Any] = obj({"design_id": STRING, "revision": INTEGER,
                                    "deleted": STRING})
HOP: dict[str, Any] = obj({"from": STRING, "port": STRING, "to": STRING})
SUGGESTION: dict[str, Any] = obj({
    "name": STRING, "input": STRING, "tags": _STRINGS, "expected": EXPECTED,
    "path": {"type": "array", "items": HOP}, "note": _NULLABLE_STRING,
    "phrased": {"type": "string", "enum": ["llm", "conditions"]},
})
SUGGESTIONS: dict[str, Any] = obj({
    "suggestions": {"type": "array", "items": SUGGESTION},
    "saved": {"type": "array", "items": CASE},
}, {"revision": INTEGER})

_NUMBER_OR_NULL: dict[str, Any] = {"type": ["number", "null"]}
_SCORES: dict[str, Any] = {"type": "object", "additionalProperties": {"type": "number"}}
COUNTS: dict[str, Any] = obj({"total": INTEGER, "passed": INTEGER, "failed": INTEGER,
                              "cancelled": INTEGER})
SLICE: dict[str, Any] = obj({"total": INTEGER, "done": INTEGER, "passed": INTEGER,
                             "failed": INTEGER, "cancelled": INTEGER,
                             "tool_accuracy": _NUMBER_OR_NULL, "judge_scores": _SCORES})
REVIEW: dict[str, Any] = obj({"status": {"enum": list(REVIEW_STATUSES)}, "note": STRING,
                              "reviewed_by": _NULLABLE_STRING,
                              "reviewed_at": _NULLABLE_STRING})
CASE_RESULT: dict[str, Any] = obj({
    "case_id": STRING, "name": STRING, "input": STRING, "tags": _STRINGS,
    "expected": {"type": "object"},
    "status": {"enum": list(CASE_STATUSES)},
    "passed": {"type": ["boolean", "null"]},
    "reason": STRING, "run_id": _NULLABLE_STRING, "judge_run_id": _NULLABLE_STRING,
    "output": _NULLABLE_STRING, "tool_accuracy": _NUMBER_OR_NULL,
    "completed_calls": _STRINGS,
    "path": {**_STRINGS, "description": "The nodes the case's run completed, in order."},
    "judge_scores": _SCORES, "judge_reason": STRING,
    "review": {"anyOf": [REVIEW, {"type": "null"}]},
    "finished_at": _NULLABLE_STRING,
})
IN_FLIGHT: dict[str, Any] = obj({
    "case_id": STRING, "name": STRING, "stage": {"enum": ["run", "judge"]},
    "run_id": _NULLABLE_STRING, "run_status": _NULLABLE_STRING, "nodes": _STRINGS,
})
# The judge an evaluation recorded at its start (evaluations.summary.judge_dict).
JUDGE_USED: dict[str, Any] = obj({
    "backend": STRING, "model": STRING, "rubric_version": STRING,
    "chosen_by": {"enum": list(JUDGE_CHOSEN_BY),
                  "description": "Who chose the judge's model: the operator (a platform "
                                 "backend model) or the project (resource:<ID>, one of its "
                                 "model resources). A gate staff set refuses the project's."},
    "destination": {**_NULLABLE_STRING,
                    "description": "A project-chosen judge: the host its model resource "
                                   "pointed at when the evaluation started."},
})
_EVALUATION_FIELDS: dict[str, Any] = {
    "id": STRING, "design_id": STRING, "project_id": INTEGER, "revision": INTEGER,
    "version_id": _NULLABLE_STRING, "content_sha256": STRING, "gate": {"type": "boolean"},
    "design_cases": {"type": ["integer", "null"]}, "all_cases": {"type": "boolean"},
    "allow_side_effects": {"type": "boolean"}, "fixtures_revision": INTEGER,
    "status": {"enum": list(EVALUATION_STATUSES)},
    "passed": {"type": ["boolean", "null"]}, "error": {"type": ["object", "null"]},
    "progress": obj({"done": INTEGER, "total": INTEGER, "queued": INTEGER,
                     "in_flight": {"type": "array", "items": IN_FLIGHT}}), "counts": COUNTS,
    "judge": JUDGE_USED,
    "judge_scores": _SCORES, "tool_accuracy": _NUMBER_OR_NULL,
    "slices": {"type": "object", "additionalProperties": SLICE},
    "reviews": {"type": "object", "additionalProperties": INTEGER},
    "created_by": _NULLABLE_STRING, "created_at": STRING,
    "started_at": _NULLABLE_STRING, "finished_at": _NULLABLE_STRING,
}
EVALUATION_BRIEF: dict[str, Any] = obj(_EVALUATION_FIELDS)
EVALUATION: dict[str, Any] = obj({**_EVALUATION_FIELDS,
                                  "cases": {"type": "array", "items": CASE_RESULT}})
EVALUATION_LIST: dict[str, Any] = obj({"evaluations": {"type": "array",
                                                       "items": EVALUATION_BRIEF}})
