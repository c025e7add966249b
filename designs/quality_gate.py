"""The quality gate of a publish.

Publishing needs a passing evaluation when the design's `require_evaluation` is on or
when the publish names an `evaluation_id` (decisions.md, publish): it must be
complete, passed, and of the published revision's behaviour hash. Those three
conditions are the reference's; an evaluation that ran only a chosen subset of the
design's cases did not test that behaviour, so it cannot open the gate either, whether
or not it was started with `gate` (docs/decisions/quality-gate-needs-every-case.md). A
gate staff switched on (`require_evaluation_by_staff`) also refuses an evaluation whose
cases were judged by a model the project chose, not the operator
(docs/decisions/staff-gates-need-the-operators-judge.md). The refusal names each
condition that failed.

Evaluations live in an app above designs, so designs cannot import it: the
evaluations app registers how to find an evaluation (`register_finder`, from its
AppConfig.ready). Without one, no evaluation exists and every gated publish is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from designs.models import Design
from kionga.errors import APIError


@dataclass(frozen=True)
class GateEvaluation:
    status: str
    # How many test cases the design had when the evaluation started (None: not recorded).
    design_cases: int | None
    summary: dict[str, Any]  # artifact.v1 `evaluation_summary`
    # The model the project chose that judged some of its cases (a `resource:` judge);
    # None when the operator's model judged them, or no case was judged.
    project_judge: str | None = None

    @property
    def ran_every_case(self) -> bool:
        return ran_every_case(self.summary.get("cases", 0), self.design_cases)


def ran_every_case(ran: int, design_cases: int | None) -> bool:
    """Whether an evaluation that ran `ran` cases ran all the design had at its start."""
    return design_cases is not None and ran == design_cases


Finder = Callable[[Design, Any], GateEvaluation | None]
_finders: list[Finder] = []


def register_finder(finder: Finder) -> None:
    if finder not in _finders:
        _finders.append(finder)


def find_evaluation(design: Design, evaluation_id: Any) -> GateEvaluation | None:
    """The design's evaluation of that ID, or None when it has none."""
    for finder in _finders:
        found = finder(design, evaluation_id)
        if found is not None:
            return found
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
    found = find_evaluation(design, evaluation_id)
    if found is None:
        raise _refused("The evaluation does not exist for this design.", content_sha256)
    problems = gate_problems(found, content_sha256, design.require_evaluation_by_staff)
    if problems:
        raise _refused("The evaluation cannot open the quality gate: " + "; ".join(problems)
                       + ".", content_sha256)
    return found.summary


def gate_problems(found: GateEvaluation, content_sha256: str,
                  staff_gate: bool) -> list[str]:
    problems = []
    if found.status != "completed":
        problems.append(f"it is not complete (it is {found.status})")
    elif not found.summary.get("passed"):
        problems.append(f"it did not pass ({found.summary.get('passed_cases', 0)} of "
                        f"{found.summary.get('cases', 0)} cases passed)")
    if found.summary.get("content_sha256") != content_sha256:
        problems.append("it evaluated another behaviour hash than this revision's (evaluate "
                        "the revision you publish)")
    if not found.ran_every_case:
        problems.append(_subset_problem(found))
    if staff_gate and found.project_judge is not None:
        problems.append(f"its cases were judged by {found.project_judge}, a model the project "
                        "chose, and staff set this design's gate: only an evaluation judged "
                        "by the operator's model (KIONGA_JUDGE_MODEL naming a platform model) "
                        "opens it")
    return problems


def _subset_problem(found: GateEvaluation) -> str:
    ran = found.summary.get("cases", 0)
    if found.design_cases is None:
        return (f"it may have run a chosen subset of the cases ({ran}; how many the design "
                "had when it started is not recorded); evaluate every case")
    return (f"it ran a chosen subset of the cases ({ran} of {found.design_cases}); "
            "evaluate every case")


def _refused(message: str, content_sha256: str) -> APIError:
    return APIError(409, "quality_gate", message, {"content_sha256": content_sha256})
