"""How an evaluation moves: cases start as ordinary runs while there is room, are scored
when their runs end, and the evaluation finishes when no case is left.

Driven from two places. The end of a case's run or judge run is settled where it is
stored (evaluations.receivers, on runs.signals.runs_ended: the ingester's batch), in
that transaction, which also takes its evaluation's next step (`settle_ended`): the
runs it starts leave for the runner when the batch commits, with no task hop and no
transaction of their own between a case's end and the next start, unless another
process is advancing that evaluation at that moment (the ingester never waits for a
lock: an advance task follows up). Gateway tasks (evaluations.tasks) do the rest:
`advance` after a start, and `settle`/`advance` for what could not be done in place
(and the beat's sweep for lost tasks). Both steps are idempotent:
- `advance` starts a batch of cases (START_BATCH) per transaction, under the
  evaluation's row lock and the chosen cases' (so two of them never start the same
  case nor pass the evaluation's room); the batch's tasks go to the runner as soon as
  it commits, not after the whole wave;
- `settle` locks the case row and acts only on a case still `running`/`judging`
  whose run has ended, so a redelivered task changes nothing.

Concurrency is bounded by the project's share of the runner (runs.quota). A refusal
for capacity (429) or a Redis hiccup (503) leaves the case waiting: a case that ends
advances again, and with none in flight a retry is scheduled. Any other refusal is the
target's, not a case's: the evaluation fails with it (status `failed`, `error`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, Final

from django.conf import settings
from django.contrib.auth.models import User
from django.db import DatabaseError, transaction
from django.db.models import Case, Count, Q, When
from django.utils import timezone

from evaluations import queue, scoring
from evaluations.fixtures import scripted_approvals
from evaluations.judge import JudgeConfig, judge_destination, judge_task
from evaluations.models import (
    CASE_FINAL,
    CASE_IN_FLIGHT,
    CASE_WAITING,
    EVALUATION_ACTIVE,
    JUDGE_BY_PROJECT,
    Evaluation,
    EvaluationCase,
)
from evaluations.summary import case_counts
from kionga import audit, prepared_sql
from kionga.errors import APIError
from runs import dispatch, quota
from runs.cancel import do_cancel_run
from runs.models import FINAL_STATUSES, Run
from runs.start import StartRequest, Target, start_target

log = logging.getLogger(__name__)
RETRY_SECONDS = 0.5
# Refusals that pass with time: the case waits instead of failing.
WAIT_STATUSES = (429, 503)


def concurrency() -> int:
    """At most the project's share of the runner's slots (runs.quota)."""
    runner_max = dispatch.runner_max_runs()
    return max(1, min(runner_max, quota.project_max_runs(runner_max)))


# Cases started per transaction under the evaluation's lock. The lock, the counts and
# the choice of cases are paid once per batch, each case then costing only its own
# start; the batch's runs reach the runner when it commits, so a wave's first task
# waits for at most this many starts (one transaction per case took three times the
# statements, and starting 200 judged cases was bound by them).
START_BATCH: Final = 10

# What one step of advance() did.
STARTED, STOPPED, BLOCKED, LOCKED = "started", "stopped", "blocked", "locked"


def advance(evaluation_id: str, *, wait: bool = True) -> None:
    """Start the evaluation's waiting cases while it has room, a batch at a time: each
    batch (up to START_BATCH cases) starts in a transaction of its own under the
    evaluation's row lock, so its runs' tasks leave for the runner as soon as it commits,
    not after the whole wave (a wave is up to the project's share). Finish the
    evaluation when no case is left. `wait=False` (the ingester's, which must not stall
    on another advancer): an evaluation whose lock another process holds is left to an
    advance task, which waits for the lock and counts again."""
    limit = concurrency()
    while (step := _advance_step(evaluation_id, limit, wait)) == STARTED:
        pass
    if step == BLOCKED:
        queue.send_advance(evaluation_id, countdown=RETRY_SECONDS)
    elif step == LOCKED:
        queue.send_advance(evaluation_id)


def _advance_step(evaluation_id: str, limit: int, wait: bool) -> str:
    """One step of advance() in a transaction of its own (_advance_locked)."""
    with transaction.atomic():
        return _advance_locked(evaluation_id, limit, wait)


def _advance_locked(evaluation_id: str, limit: int, wait: bool) -> str:
    """Under the evaluation's lock, in the caller's transaction: finish it, or start a
    batch of its waiting cases (STARTED), or stop: no room or nothing waiting (STOPPED),
    or the runner refused for capacity with none of its cases in flight, so nothing else
    will advance it (BLOCKED); LOCKED when `wait` is False and another process holds the
    lock."""
    evaluation = (Evaluation.objects.select_for_update(of=("self",), skip_locked=not wait)
                  .select_related("design__project", "created_by")
                  .filter(pk=evaluation_id, status__in=EVALUATION_ACTIVE).first())
    if evaluation is None:
        if not wait and Evaluation.objects.filter(
                pk=evaluation_id, status__in=EVALUATION_ACTIVE).exists():
            return LOCKED
        return STOPPED
    counts = dict(evaluation.cases.order_by().values_list("status")
                  .annotate(n=Count("pk")))
    in_flight = sum(counts.get(s, 0) for s in CASE_IN_FLIGHT)
    waiting = sum(counts.get(s, 0) for s in CASE_WAITING)
    if not in_flight and not waiting:
        _finish(evaluation)
        return STOPPED
    if not waiting or in_flight >= limit:
        return STOPPED
    # Judging first: those cases are nearly done. Without `wait`, cases another process
    # holds (a settle task, which advances once it commits) are left to it.
    cases = list(evaluation.cases.select_for_update(of=("self",), skip_locked=not wait)
                 .filter(status__in=CASE_WAITING)
                 .order_by(Case(When(status="to_judge", then=0), default=1), "position")
                 [:min(limit - in_flight, START_BATCH)])
    if not cases:
        return STOPPED
    # Another batch only if this one leaves both room and waiting cases (a case
    # scored meanwhile is advanced by whoever scored it, once that commits).
    more = len(cases) < min(limit - in_flight, waiting)
    started: list[EvaluationCase] = []
    step = STARTED
    try:
        for case in cases:
            _start_case(evaluation, case)
            started.append(case)
    except APIError as error:
        if error.status_code in WAIT_STATUSES:
            step = STARTED if started else STOPPED if in_flight else BLOCKED
        else:
            # Not a case's fault: its target cannot run any more (a resource deleted,
            # the author gone). Every case would fail alike: the evaluation fails once.
            _record_started(started)
            runs = _end_early(evaluation, "failed", None,
                              {"code": error.code, "message": error.message})
            transaction.on_commit(lambda: _cancel_runs(evaluation.created_by, runs))
            return STOPPED
    _record_started(started)
    if started and evaluation.status == "queued":
        evaluation.status, evaluation.started_at = "running", timezone.now()
        evaluation.save(update_fields=["status", "started_at"])
    return step if step != STARTED or more else STOPPED


def _start_case(evaluation: Evaluation, case: EvaluationCase) -> None:
    """Start the case's run (or its judge's), locked and waiting: in memory until
    _record_started stores the batch."""
    user = evaluation.created_by
    if user is None:
        raise APIError(422, "invalid_request", "The evaluation's author no longer exists.")
    if case.status == "to_judge":
        case.judge_run = _start_judge(evaluation, case, user)
        case.status = "judging"
    else:
        case.run = _start_run(evaluation, case, user)
        case.status = "running"


def _record_started(cases: list[EvaluationCase]) -> None:
    if cases:
        prepared_sql.update_rows(cases, ["status", "run", "judge_run"])


def _start_run(evaluation: Evaluation, case: EvaluationCase, user: User) -> Run:
    target = Target(evaluation.design, evaluation.revision, evaluation.graph,
                    evaluation.content_sha256, version_id=evaluation.version_id)
    history = [dict(turn) for turn in case.case.get("history") or []]
    request = StartRequest(case.case["input"], None, history, evaluation.allow_side_effects,
                           None, None)
    # A case's run never reaches people: its approvals resolve as the case says.
    return start_target(user, target, request,
                        scripted_approvals=scripted_approvals(case.case))


def _start_judge(evaluation: Evaluation, case: EvaluationCase, user: User) -> Run:
    task = judge_task(judge_of(evaluation), case.case, case.output or "")
    target = Target(evaluation.design, evaluation.revision, task.graph, task.content_sha256,
                    platform_llm=task.platform_llm)
    return start_target(user, target, StartRequest(task.input, None, [], False, None, None))


def judge_of(evaluation: Evaluation) -> JudgeConfig:
    """The judge recorded when the evaluation started (one judge for all its cases)."""
    return JudgeConfig(evaluation.judge_backend, evaluation.judge_model,
                       int(settings.KIONGA_JUDGE_TIMEOUT_SECONDS))


def judge_repointed(evaluation: Evaluation) -> str | None:
    """Why a project-chosen judge's answer does not count: its model resource points at
    another host than when the evaluation started (its admins changed the URL meanwhile),
    so the judge recorded is not the one that answered. None when it still points there,
    for the operator's judge, and when the start recorded no destination."""
    recorded = evaluation.judge_destination
    if evaluation.judge_chosen_by != JUDGE_BY_PROJECT or recorded is None:
        return None
    judge = judge_of(evaluation)
    now = judge_destination(evaluation.project, judge)
    if now == recorded:
        return None
    return (f"The judge's answer does not count: its model {judge.model} pointed at "
            f"{recorded or 'no model resource'} when the evaluation started and points at "
            f"{now or 'no model resource'} now.")


def settle(case_ids: list[int]) -> None:
    for evaluation_id in sorted(settle_cases(case_ids)):
        advance(evaluation_id)


def settle_ended(case_ids: list[int]) -> None:
    """In the transaction that stores the end of the cases' runs (the ingester's batch,
    through runs_ended), in one savepoint: score the cases, then take one step of each
    of their evaluations (start a batch of what it has room for, or finish it), so the
    runs started leave for the runner when that batch commits: no task, and no
    transaction of its own, between a case's end and the start of its judge or of the
    next case. The ingester never waits for a lock there: an evaluation another process
    is advancing goes to an advance task, waiting cases another process holds are
    skipped (it advances after). More batches to start continue in this process once
    the batch commits. If the database refuses (or Redis, for the share), the savepoint
    is undone and a settle task scores and advances them instead (and if Redis refuses
    that too, the beat's sweep)."""
    try:
        limit: int | None = concurrency()
    except quota.REDIS_ERRORS as error:  # scored here all the same; advanced by a task
        limit, unread = None, error
    steps: dict[str, str] = {}
    try:
        with transaction.atomic():
            evaluations = _settle_locked(case_ids)
            for evaluation_id in sorted(evaluations):
                if limit is not None:
                    steps[evaluation_id] = _advance_locked(evaluation_id, limit, wait=False)
    except DatabaseError as error:
        log.warning("Could not settle evaluation cases %s with their runs' ends (%s); "
                    "a task will", case_ids, error)
        # robust: whatever goes wrong there is logged, never raised into the ingester's
        # loop (the sweep advances what it left).
        transaction.on_commit(lambda: _send(queue.send_settle, case_ids), robust=True)
        return
    if limit is None:
        for evaluation_id in sorted(evaluations):
            log.warning("Could not advance evaluation %s here (%s); a task will",
                        evaluation_id, unread)
            steps[evaluation_id] = LOCKED
    onward = sorted(evaluation_id for evaluation_id, step in steps.items()
                    if step == STARTED)
    if onward:
        transaction.on_commit(lambda: advance_each(onward), robust=True)
    later = [(evaluation_id, RETRY_SECONDS if step == BLOCKED else None)
             for evaluation_id, step in steps.items() if step in (LOCKED, BLOCKED)]
    if later:
        transaction.on_commit(lambda: _send(_send_advances, later), robust=True)


def _send_advances(advances: list[tuple[str, float | None]]) -> None:
    for evaluation_id, countdown in advances:
        queue.send_advance(evaluation_id, countdown=countdown)


def advance_each(evaluation_ids: list[str]) -> None:
    """advance() each evaluation here, each on its own; one that fails goes to a task."""
    for evaluation_id in evaluation_ids:
        try:
            advance(evaluation_id, wait=False)
        except (DatabaseError, *quota.REDIS_ERRORS) as error:
            log.warning("Could not advance evaluation %s here (%s); a task will",
                        evaluation_id, error)
            _send(queue.send_advance, evaluation_id)


def _send(send: Callable[[Any], None], argument: Any) -> None:
    try:
        send(argument)
    except quota.REDIS_ERRORS as error:  # the beat's sweep picks it up
        log.warning("Could not enqueue an evaluation task (%s); the sweep will", error)


SCORED_FIELDS: Final = ["status", "output", "completed_calls", "path", "tool_accuracy",
                        "judge_scores", "judge_reason", "reason", "finished_at"]


def settle_cases(case_ids: list[int]) -> set[str]:
    """Score those of the cases whose run or judge run has ended, together: a few
    statements whatever their number (the ingester settles a batch of ends at once).
    The IDs of their evaluations."""
    with transaction.atomic():
        return _settle_locked(case_ids)


def _settle_locked(case_ids: list[int]) -> set[str]:
    """settle_cases in the caller's transaction."""
    cases = list(EvaluationCase.objects.select_for_update(of=("self",))
                 .select_related("run", "judge_run", "evaluation__project")
                 .filter(pk__in=case_ids).order_by("pk"))
    ran = [case for case in cases if case.status == "running" and _ended(case.run)]
    judged = [case for case in cases if case.status == "judging" and _ended(case.judge_run)]
    completions = scoring.completions_of([case.run for case in ran if case.run])
    for case in ran:
        scoring.after_run(case, judge_of(case.evaluation), completions[case.run_id])
    repointed: dict[str, str | None] = {}  # one look at each evaluation's judge
    for case in judged:
        key = str(case.evaluation_id)
        if key not in repointed:
            repointed[key] = judge_repointed(case.evaluation)
        scoring.after_judge(case, repointed[key])
    if ran or judged:
        prepared_sql.update_rows(ran + judged, SCORED_FIELDS)
    return {str(case.evaluation_id) for case in cases}


SWEEP_BATCH = 500


def sweep() -> int:
    """Pick up what a lost task left behind; the number of evaluations advanced.

    settle and advance normally run from `runs_ended` and from each other. If one of
    those tasks is lost (a worker killed mid-task, Redis restarted), its cases would wait
    for ever; the beat runs this every few seconds. Both steps are idempotent, so sweeping
    an evaluation that is moving on its own changes nothing.
    """
    stuck = list(EvaluationCase.objects.filter(
        Q(status="running", run__status__in=FINAL_STATUSES)
        | Q(status="judging", judge_run__status__in=FINAL_STATUSES),
        evaluation__status__in=EVALUATION_ACTIVE).values_list("pk", flat=True)[:SWEEP_BATCH])
    settle(stuck)
    # Active with nothing in flight: an advance was lost (or is due after a retry).
    idle = list(Evaluation.objects.filter(status__in=EVALUATION_ACTIVE)
                .exclude(cases__status__in=CASE_IN_FLIGHT)
                .values_list("pk", flat=True)[:SWEEP_BATCH])
    for evaluation_id in idle:
        advance(str(evaluation_id))
    return len(idle)


def _ended(run: Run | None) -> bool:
    return run is not None and run.status in FINAL_STATUSES


def _finish(evaluation: Evaluation) -> None:
    counts = case_counts(evaluation.cases.values_list("status", flat=True))
    evaluation.status = "completed"
    evaluation.passed = counts["failed"] == 0 and counts["cancelled"] == 0 and \
        counts["passed"] > 0
    evaluation.finished_at = timezone.now()
    evaluation.save(update_fields=["status", "passed", "finished_at"])
    _audit_finished(evaluation, None, counts)


def _audit_finished(evaluation: Evaluation, actor: User | None, counts: dict[str, int]) -> None:
    audit.record("evaluation.finished", project=evaluation.project, actor=actor,
                 target_type="evaluation", target_id=evaluation.pk,
                 details={"design_id": str(evaluation.design_id), "status": evaluation.status,
                          "passed": evaluation.passed, "content_sha256":
                          evaluation.content_sha256, **counts})


def do_cancel_evaluation(user: User, evaluation: Evaluation) -> Evaluation:
    """Cancel the waiting cases and the runs of those in flight; 409 once it ended."""
    with transaction.atomic():
        locked = Evaluation.objects.select_for_update().get(pk=evaluation.pk)
        if locked.status not in EVALUATION_ACTIVE:
            raise APIError(409, "evaluation_not_active",
                           f"The evaluation is already {locked.status}.")
        runs = _end_early(locked, "cancelled", user, None)
    _cancel_runs(user, runs)
    return locked


def _end_early(evaluation: Evaluation, status: str, actor: User | None,
               error: dict[str, str] | None) -> list[Run]:
    """End a locked evaluation before its cases did (cancelled, or failed with `error`):
    every unfinished case is cancelled; the runs still in flight, to cancel after."""
    runs = [run for case in evaluation.cases.filter(status__in=CASE_IN_FLIGHT)
            .select_related("run", "judge_run")
            if (run := case.judge_run if case.status == "judging" else case.run)]
    why = "was cancelled" if error is None else f"failed: {error['message'].rstrip('.')}"
    evaluation.cases.exclude(status__in=CASE_FINAL).update(
        status="cancelled", reason=f"The evaluation {why}.", finished_at=timezone.now())
    evaluation.status, evaluation.passed, evaluation.error = status, False, error
    evaluation.finished_at = timezone.now()
    evaluation.save(update_fields=["status", "passed", "error", "finished_at"])
    _audit_finished(evaluation, actor, case_counts(
        evaluation.cases.values_list("status", flat=True)))
    return runs


def _cancel_runs(user: User | None, runs: list[Run]) -> None:
    for run in runs:
        run.refresh_from_db(fields=["status"])
        if user is None or not run.is_active:
            continue  # ended meanwhile; or nobody to cancel as: the runner's lease ends it
        try:
            do_cancel_run(user, run)
        except (APIError, *quota.REDIS_ERRORS):
            pass  # it ended meanwhile, or its lease ends it: the case is cancelled
