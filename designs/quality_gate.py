"""The quality gate of a publish: where the evaluations issue plugs in.

Publishing needs a passing evaluation when the design's `require_evaluation` is on or
when the publish names an `evaluation_id` (decisions.md, publish): it must be
complete, passed, and of the published revision's behaviour hash. No evaluation can
exist yet, so today every gated publish is refused; the evaluations app will give
`find_evaluation` a body that looks the evaluation up.
"""

from __future__ import annotations

from typing import Any

from designs.models import Design
from kionga.errors import APIError


def find_evaluation(design: Design, evaluation_id: str) -> dict[str, Any] | None:
    """The evaluation's summary (artifact.v1 `evaluation_summary`), or None when the
    design has no such evaluation. Evaluations do not exist yet."""
    return None


def check_quality_gate(design: Design, content_sha256: str,
                       evaluation_id: str | None) -> dict[str, Any] | None:
    """The summary of the evaluation that lets this publish through, None when no gate
    applies; 409 quality_gate when one applies and is not met."""
    if evaluation_id is None and not design.require_evaluation:
        return None
    if evaluation_id is None:
        raise _refused("This design requires a passing evaluation to publish: send "
                       "evaluation_id.", content_sha256)
    summary = find_evaluation(design, evaluation_id)
    if summary is None:
        raise _refused("The evaluation does not exist for this design.", content_sha256)
    if not summary.get("passed"):
        raise _refused("The evaluation did not pass.", content_sha256)
    if summary.get("content_sha256") != content_sha256:
        raise _refused("The evaluation evaluated another behaviour than this revision's; "
                       "evaluate the revision you publish.", content_sha256)
    return summary


def _refused(message: str, content_sha256: str) -> APIError:
    return APIError(409, "quality_gate", message, {"content_sha256": content_sha256})
