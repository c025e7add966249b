"""bench/capacity.py measures the product at its own defaults and counts in-flight runs
from their spans: its stack drops the test stack's capacity (KIONGA_DESIGNER_MAX_RUNS,
the runner's --concurrency) unless the shell sets it, in_flight is the most runs
accepted and not ended at one instant, and its sampled streams are followed by as many
viewers as KIONGA_MAX_STREAMS_PER_USER needs (none past it)."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.capacity_load import peak_overlap, watcher_of, watchers_needed
from bench.capacity_stack import DefaultStack, Project


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


@pytest.mark.parametrize(("sample", "per_user"), [(100, 10), (101, 10), (7, 10), (30, 3)])
def test_no_viewer_follows_more_streams_than_a_user_may(sample: int, per_user: int) -> None:
    projects = [Project(1, "a", "a"), Project(2, "b", "b")]
    for project in projects:
        project.watchers = [f"{project.name}-{n}" for n in
                            range(watchers_needed(sample, len(projects), per_user))]
    followers = Counter(watcher_of(lane, projects, per_user) for lane in range(sample))
    assert max(followers.values()) <= per_user
    # Each lane follows as a viewer of its own project (lanes alternate projects).
    assert all(watcher_of(lane, projects, per_user).startswith("ab"[lane % 2])
               for lane in range(sample))
