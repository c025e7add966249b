"""Scoring one case from its ended runs: the calls it made, then the judge's scores.

Plain functions on rows already loaded and locked by evaluations.progress; each sets
the case's result fields and its next status (to_judge, passed or failed).
"""

from __future__ import annotations

from typing import Any, Final

from django.utils import timezone

from evaluations.judge import JudgeConfig, parse_answer
from evaluations.models import EvaluationCase
from runs.models import Run, RunEvent


def completed_calls(run: Run, calls: list[str]) -> list[str]:
    """The expected node IDs that completed in the run's stored events (a node whose
    failure went down its error port did not complete)."""
    if not calls:
        return []
    rows = RunEvent.objects.filter(run=run, type="node.completed", data__node_id__in=calls)
    # In Python: output nodes' events have no port, and SQL's NOT would drop them too.
    done = {node for node, port in rows.values_list("data__node_id", "data__port")
            if port != "error"}
    return [call for call in calls if call in done]


MAX_PATH: Final = 500  # a loop's nodes complete once per round: the path stops there


def run_path(run: Run) -> list[str]:
    """The nodes the run completed, in the order they completed (at most MAX_PATH)."""
    rows = RunEvent.objects.filter(run=run, type="node.completed").order_by("seq")
    return [str(node) for node in rows.values_list("data__node_id", flat=True)[:MAX_PATH]]


def after_run(case: EvaluationCase, judge: JudgeConfig) -> None:
    """The case's run ended: its calls decide, then the judge if the case has criteria."""
    run = case.run
    assert run is not None
    calls: list[str] = list(case.case["expected"].get("calls") or [])
    case.output = run.output
    case.completed_calls = completed_calls(run, calls)
    case.path = run_path(run)
    case.tool_accuracy = len(case.completed_calls) / len(calls) if calls else None
    problems = []
    if run.status != "completed":
        problems.append(f"its run {run.status}{_error_text(run)}")
    missing = [call for call in calls if call not in case.completed_calls]
    if missing:
        problems.append("expected calls did not complete: " + ", ".join(missing))
    if problems:
        end(case, False, "The case failed: " + "; ".join(problems) + ".")
    elif not case.judged:
        end(case, True, "Its run completed" + (" with every expected call." if calls else "."))
    elif judge.unusable:
        end(case, False, f"The judge could not score: {judge.unusable} (set "
                         "KIONGA_JUDGE_BACKEND and KIONGA_JUDGE_MODEL).")
    else:
        case.status = "to_judge"


def after_judge(case: EvaluationCase, repointed: str | None) -> None:
    """The judge's run ended: its strict JSON scores decide; anything else fails, and so
    does an answer from a judge that no longer is the one recorded (`repointed`: why)."""
    run = case.judge_run
    assert run is not None
    judge: dict[str, Any] = case.case["expected"]["judge"]
    if repointed is not None:
        end(case, False, repointed)
        return
    if run.status != "completed":
        end(case, False, f"The judge could not score: its run {run.status}{_error_text(run)}.")
        return
    verdict = parse_answer(run.output, list(judge["criteria"]))
    if not verdict.scored:
        end(case, False, verdict.reason)
        return
    case.judge_scores, case.judge_reason = verdict.scores, verdict.reason
    minimum = float(judge["min_score"])
    low = [f"{name} {score:g}" for name, score in verdict.scores.items() if score < minimum]
    if low:
        end(case, False, f"Scores below {minimum:g}: " + ", ".join(low) + ".")
    else:
        end(case, True, f"Every criterion scored at least {minimum:g}.")


def end(case: EvaluationCase, passed: bool, reason: str) -> None:
    case.status = "passed" if passed else "failed"
    case.reason = reason
    case.finished_at = timezone.now()


def _error_text(run: Run) -> str:
    error = run.error if isinstance(run.error, dict) else None
    if not error:
        return ""
    return f" ({error.get('code', 'error')}: {error.get('message', '')})"
