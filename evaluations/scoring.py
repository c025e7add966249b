"""Scoring one case from its ended runs: the calls it made, then the judge's scores.

Plain functions on rows already loaded and locked by evaluations.progress (with the
node completions of a batch of runs, read at once by completions_of); each sets the
case's result fields and its next status (to_judge, passed or failed).
"""

from __future__ import annotations

from typing import Any, Final

from django.utils import timezone

from evaluations.judge import JudgeConfig, parse_answer
from evaluations.models import EvaluationCase
from runs.models import Run, RunEvent

# A run's node.completed events in order: (node ID, its port; None for an output node).
Completions = list[tuple[str, str | None]]


def completions_of(runs: list[Run]) -> dict[Any, Completions]:
    """Each run's node.completed events in order (by run ID): one query for them all."""
    found: dict[Any, Completions] = {run.pk: [] for run in runs}
    if runs:
        rows = (RunEvent.objects.filter(run__in=runs, type="node.completed")
                .order_by("run_id", "seq").values_list("run_id", "data__node_id", "data__port"))
        for run_id, node, port in rows:
            found[run_id].append((str(node), port))
    return found


def completed_calls(completions: Completions, calls: list[str]) -> list[str]:
    """The expected node IDs that completed (a node whose failure went down its error
    port did not complete)."""
    done = {node for node, port in completions if port != "error"}
    return [call for call in calls if call in done]


MAX_PATH: Final = 500  # a loop's nodes complete once per round: the path stops there


def run_path(completions: Completions) -> list[str]:
    """The nodes the run completed, in the order they completed (at most MAX_PATH)."""
    return [node for node, _port in completions[:MAX_PATH]]


def after_run(case: EvaluationCase, judge: JudgeConfig, completions: Completions) -> None:
    """The case's run ended (`completions`: its node.completed events): its calls decide,
    then the judge if the case has criteria."""
    run = case.run
    assert run is not None
    calls: list[str] = list(case.case["expected"].get("calls") or [])
    case.output = run.output
    case.completed_calls = completed_calls(completions, calls)
    case.path = run_path(completions)
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
