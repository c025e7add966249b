"""What an evaluation reports: counts, progress, mean judge scores, tool accuracy,
per-tag slices and each case's result with its review (the API's and the admin's)."""

from __future__ import annotations

import uuid
from collections import Counter, defaultdict
from collections.abc import Iterable
from statistics import fmean
from typing import Any, Final

from designs.quality_gate import ran_every_case
from evaluations.models import (
    CASE_FINAL,
    CASE_IN_FLIGHT,
    CASE_WAITING,
    Evaluation,
    EvaluationCase,
)
from runs.models import Run, RunEvent

# The events that open and close a node's span (a retry keeps it open).
NODE_SPAN: Final = ("node.started", "node.completed", "node.failed")


def case_counts(statuses: Iterable[str]) -> dict[str, int]:
    counted = Counter(statuses)
    return {"total": sum(counted.values()), "done": sum(counted[s] for s in CASE_FINAL),
            "passed": counted["passed"], "failed": counted["failed"],
            "cancelled": counted["cancelled"]}


def _mean(values: list[float]) -> float | None:
    return round(fmean(values), 4) if values else None


def in_flight(cases: list[EvaluationCase]) -> list[dict[str, Any]]:
    """What an evaluation is waiting on: each case whose run (or judge run) is in flight,
    with that run's status and the nodes it is in now (started and not yet ended, from
    its stored events) — `waiting` with an approval node means a person."""
    flying = [(case, case.judge_run_id if case.status == "judging" else case.run_id)
              for case in cases if case.status in CASE_IN_FLIGHT]
    run_ids = [run_id for _, run_id in flying if run_id is not None]
    statuses = dict(Run.objects.filter(pk__in=run_ids).values_list("pk", "status")) \
        if run_ids else {}
    nodes = running_nodes(run_ids)
    return [{"case_id": case.case_id, "name": case.name,
             "stage": "judge" if case.status == "judging" else "run",
             "run_id": str(run_id) if run_id else None,
             "run_status": statuses.get(run_id) if run_id else None,
             "nodes": nodes.get(run_id, []) if run_id else []}
            for case, run_id in flying]


def running_nodes(run_ids: list[uuid.UUID]) -> dict[uuid.UUID, list[str]]:
    """Per run: the nodes that started and have not completed or failed yet."""
    if not run_ids:
        return {}
    open_nodes: dict[uuid.UUID, dict[str, None]] = defaultdict(dict)
    events = (RunEvent.objects.filter(run_id__in=run_ids, type__in=NODE_SPAN)
              .order_by("run_id", "seq").values_list("run_id", "type", "data__node_id"))
    for run_id, kind, node_id in events:
        if kind == "node.started":
            open_nodes[run_id][str(node_id)] = None
        else:
            open_nodes[run_id].pop(str(node_id), None)
    return {run_id: list(found) for run_id, found in open_nodes.items()}


def judge_scores(cases: list[EvaluationCase]) -> dict[str, float]:
    """The mean score of each criterion over the cases the judge scored."""
    per: dict[str, list[float]] = defaultdict(list)
    for case in cases:
        for name, score in (case.judge_scores or {}).items():
            per[name].append(float(score))
    return {name: round(fmean(scores), 4) for name, scores in sorted(per.items())}


def tool_accuracy(cases: list[EvaluationCase]) -> float | None:
    return _mean([c.tool_accuracy for c in cases if c.tool_accuracy is not None])


def slices(cases: list[EvaluationCase]) -> dict[str, dict[str, Any]]:
    """Per tag: how its cases fared."""
    tagged: dict[str, list[EvaluationCase]] = defaultdict(list)
    for case in cases:
        for tag in case.case.get("tags") or []:
            tagged[tag].append(case)
    return {tag: {**case_counts(c.status for c in group),
                  "tool_accuracy": tool_accuracy(group), "judge_scores": judge_scores(group)}
            for tag, group in sorted(tagged.items())}


def judge_dict(evaluation: Evaluation) -> dict[str, Any]:
    """The judge the evaluation recorded at its start, with who chose its model (the
    operator, or the project: a staff gate refuses the project's) and, for a project's
    model resource, the host it pointed at then."""
    return {"backend": evaluation.judge_backend, "model": evaluation.judge_model,
            "rubric_version": evaluation.rubric_version,
            "chosen_by": evaluation.judge_chosen_by,
            "destination": evaluation.judge_destination or None}


def evaluation_dict(evaluation: Evaluation, cases: list[EvaluationCase],
                    with_cases: bool = True) -> dict[str, Any]:
    counts = case_counts(c.status for c in cases)
    found: dict[str, Any] = {
        "id": str(evaluation.pk),
        "design_id": str(evaluation.design_id),
        "project_id": evaluation.project_id,
        "revision": evaluation.revision,
        "version_id": evaluation.version_id or None,
        "content_sha256": evaluation.content_sha256,
        "gate": evaluation.gate,
        "design_cases": evaluation.design_cases,
        "all_cases": ran_every_case(counts["total"], evaluation.design_cases),
        "allow_side_effects": evaluation.allow_side_effects,
        "fixtures_revision": evaluation.fixtures_revision,
        "status": evaluation.status,
        "passed": evaluation.passed,
        "error": evaluation.error,
        "progress": {"done": counts["done"], "total": counts["total"],
                     "queued": sum(c.status in CASE_WAITING for c in cases),
                     "in_flight": in_flight(cases)},
        "counts": {k: counts[k] for k in ("total", "passed", "failed", "cancelled")},
        "judge": judge_dict(evaluation),
        "judge_scores": judge_scores(cases),
        "tool_accuracy": tool_accuracy(cases),
        "slices": slices(cases),
        "reviews": dict(Counter(c.review_status for c in cases if c.review_status)),
        "created_by": evaluation.created_by.get_username() if evaluation.created_by else None,
        "created_at": evaluation.created_at.isoformat(),
        "started_at": _iso(evaluation.started_at),
        "finished_at": _iso(evaluation.finished_at),
    }
    if with_cases:
        found["cases"] = [case_dict(case) for case in cases]
    return found


def case_dict(case: EvaluationCase) -> dict[str, Any]:
    expected = case.case.get("expected") or {}
    return {
        "case_id": case.case_id,
        "name": case.name,
        "input": case.case.get("input", ""),
        "tags": list(case.case.get("tags") or []),
        "expected": expected,
        "status": case.status,
        "passed": {"passed": True, "failed": False}.get(case.status),
        "reason": case.reason,
        "run_id": str(case.run_id) if case.run_id else None,
        "judge_run_id": str(case.judge_run_id) if case.judge_run_id else None,
        "output": case.output,
        "tool_accuracy": case.tool_accuracy,
        "completed_calls": list(case.completed_calls or []),
        "path": list(case.path or []),
        "judge_scores": dict(case.judge_scores or {}),
        "judge_reason": case.judge_reason,
        "review": None if not case.review_status else {
            "status": case.review_status, "note": case.review_note,
            "reviewed_by": case.reviewed_by.get_username() if case.reviewed_by else None,
            "reviewed_at": _iso(case.reviewed_at)},
        "finished_at": _iso(case.finished_at),
    }


def artifact_summary(evaluation: Evaluation, cases: list[EvaluationCase]) -> dict[str, Any]:
    """artifact.v1's evaluation_summary, carried by the version a publish creates."""
    summary: dict[str, Any] = {
        "evaluation_id": str(evaluation.pk),
        "passed": bool(evaluation.passed),
        "content_sha256": evaluation.content_sha256,
        "cases": len(cases),
        "passed_cases": sum(1 for c in cases if c.status == "passed"),
        "judge_scores": judge_scores(cases),
        "tool_accuracy": tool_accuracy(cases),
        "judge": judge_dict(evaluation),
    }
    if evaluation.finished_at is not None:
        summary["completed_at"] = evaluation.finished_at.isoformat()
    return summary


def _iso(value: Any) -> str | None:
    return value.isoformat() if value is not None else None
