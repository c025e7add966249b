"""bench/capacity.py measures the product at its own defaults and counts in-flight runs
from their spans: its stack drops the test stack's capacity (KIONGA_DESIGNER_MAX_RUNS,
the runner's --concurrency) unless the shell sets it, and in_flight is the most runs
accepted and not ended at one instant."""

from __future__ import annotations

import pytest

from bench.capacity import DefaultStack, peak_overlap


def test_in_flight_is_the_peak_overlap_of_the_spans() -> None:
    assert peak_overlap([]) == 0
    assert peak_overlap([(0, 5), (1, 6), (2, 7)]) == 3
    # One ends as another is accepted: they never overlap.
    assert peak_overlap([(0, 5), (5, 10), (10, 15)]) == 1
    assert peak_overlap([(0, 10), (1, 2), (3, 4), (3.5, 9)]) == 3


def test_the_stack_runs_at_the_products_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KIONGA_DESIGNER_MAX_RUNS", raising=False)
    stack = DefaultStack(database_url="postgres://127.0.0.1/x")
    assert "KIONGA_DESIGNER_MAX_RUNS" not in stack.env()
    assert "--concurrency" not in stack.runner_command()
    assert stack.runner_command()[:3] == stack.commands()["runner"][:3]
    monkeypatch.setenv("KIONGA_DESIGNER_MAX_RUNS", "16")  # the operator's own choice
    stack = DefaultStack(database_url="postgres://127.0.0.1/x")
    assert stack.env()["KIONGA_DESIGNER_MAX_RUNS"] == "16"
    assert "--concurrency" not in stack.runner_command()
