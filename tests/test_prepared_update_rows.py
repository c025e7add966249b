"""kionga.prepared_sql.update_rows stores what the ORM's save would, in one statement
whatever the number of rows: text, JSON (null, lists, objects, hostile text), floats,
foreign keys set and cleared, times; the rows not named and the fields not named keep
what they held."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evaluations.models import EvaluationCase
from kionga import prepared_sql
from tests.evaluations_helpers import calls_only, make_evaluated, start_evaluation
from tests.ingest_helpers import make_run

pytestmark = pytest.mark.django_db

FIELDS = ["status", "output", "completed_calls", "path", "tool_accuracy", "judge_scores",
          "judge_reason", "reason", "finished_at", "run"]


def stored(case: EvaluationCase) -> dict[str, Any]:
    fresh = EvaluationCase.objects.get(pk=case.pk)
    return {name: getattr(fresh, "run_id" if name == "run" else name)
            for name in [*FIELDS, "name", "case_id"]}


def test_it_stores_the_named_fields_of_each_row_in_one_statement(
        api: Any, alice: Any, acme: Any, runner_configured: Any) -> None:
    design = make_evaluated(alice, acme, [calls_only(f"c{i}", f"q{i}") for i in range(4)])
    evaluation = start_evaluation(api, alice, design)
    first, second, third, untouched = list(evaluation.cases.order_by("position"))
    before = stored(untouched)
    run = make_run(alice, acme, design)
    first.status, first.output, first.run = "passed", "Answer \u2028 \U0001f600", run
    first.completed_calls, first.path = ["input", "model", "output"], ["input", "output"]
    first.judge_scores, first.tool_accuracy = {"task_completion": 0.75, "nested": {"a": [1]}}, 0.5
    first.finished_at = datetime(2026, 12, 7, 4, 0, 1, 250000, tzinfo=UTC)
    second.status, second.output, second.reason = "failed", None, "'; DROP TABLE x; --"
    second.judge_scores, second.tool_accuracy = {}, None
    third.run, third.judge_reason = None, "ok"

    with CaptureQueriesContext(connection) as queries:
        prepared_sql.update_rows([first, second, third], FIELDS)
    assert len(queries) <= 1  # prepared statements bypass Django's cursor wrapper

    for case in (first, second, third):
        assert stored(case) == {name: getattr(case, "run_id" if name == "run" else name)
                                for name in [*FIELDS, "name", "case_id"]}
    assert stored(untouched) == before


def test_fields_not_named_keep_what_they_held(api: Any, alice: Any, acme: Any,
                                              runner_configured: Any) -> None:
    design = make_evaluated(alice, acme, [calls_only("only", "q")])
    case = start_evaluation(api, alice, design).cases.get()
    case.status, case.reason = "passed", "changed in memory only"
    prepared_sql.update_rows([case], ["status"])
    fresh = EvaluationCase.objects.get(pk=case.pk)
    assert (fresh.status, fresh.reason) == ("passed", "")


def test_no_rows_is_no_statement() -> None:
    with CaptureQueriesContext(connection) as queries:
        prepared_sql.update_rows([], ["status"])
    assert len(queries) == 0
