"""A prefork child runs the run task through runner.celery_app.trace_run, not Celery's
own tracer: start() with the message's hard limit, a failure logged and never raised,
and an answer fast_trace_task turns into a success for the parent."""

from __future__ import annotations

from typing import Any

import pytest
from celery.app import trace

from runner import celery_app


def test_the_pool_process_runs_the_task_through_the_lean_tracer(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(celery_app, "warm_up", lambda: None)
    monkeypatch.setattr(celery_app, "SETTINGS", None)
    monkeypatch.setattr(celery_app.execute_run, "__trace__", None)
    celery_app.prepare_pool_process()
    assert celery_app.execute_run.__trace__ is celery_app.trace_run


def test_the_message_reaches_start_with_its_hard_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, ...]] = []
    monkeypatch.setattr(celery_app, "start",
                        lambda payload, signature, hard_limit: calls.append(
                            (payload, signature, hard_limit)))
    monkeypatch.setattr(celery_app.execute_run, "__trace__", celery_app.trace_run)
    body: tuple[list[Any], dict[str, Any], dict[str, Any]] = ([{"run_id": "r"}, "sig"], {}, {})
    request: dict[str, Any] = {"timelimit": [42.0, None], "id": "t"}
    answer = trace.fast_trace_task(celery_app.execute_run.name, "t", request, body, None,
                                   None, _loc=[celery_app.app.tasks, None, "host"])
    assert calls == [({"run_id": "r"}, "sig", 42.0)]
    assert answer[0] == 0  # a success for the parent


@pytest.mark.allow_output  # the failure is logged on purpose
def test_a_task_that_fails_is_logged_not_raised(monkeypatch: pytest.MonkeyPatch,
                                                caplog: pytest.LogCaptureFixture) -> None:
    def broken(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(celery_app, "start", broken)
    result, info, _seconds, _text = celery_app.trace_run("t", [{}, "sig"], {}, {})
    assert (result, info) == (None, None)
    assert "run task" in caplog.text and "boom" in caplog.text
