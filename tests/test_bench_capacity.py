"""bench/capacity.py measures the product at its own defaults and counts in-flight runs
from their spans: its stack drops the test stack's capacity (KIONGA_DESIGNER_MAX_RUNS,
the runner's --concurrency) unless the shell sets it, in_flight is the most runs
accepted and not ended at one instant, and its sampled streams are followed by as many
viewers as KIONGA_MAX_STREAMS_PER_USER needs (none past it), from lanes spread over all
(each wave of starts is served in lane order: the first lanes' runs wait least); its
steady figures count
only the window between the first burst absorbed and the first lane done, at the lanes'
cycle rate."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.capacity_load import (
    RunTimes,
    followed_lanes,
    peak_overlap,
    steady,
    watcher_of,
    watchers_needed,
)
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


@pytest.mark.parametrize(("lanes", "sample"), [(1000, 100), (40, 10), (101, 7), (10, 6),
                                              (7, 7), (3, 2)])
def test_the_followed_lanes_are_spread_over_all_and_keep_their_projects(
        lanes: int, sample: int) -> None:
    followed = followed_lanes(lanes, sample, 2)
    assert sorted(followed.values()) == list(range(sample))  # every place, once
    assert all(0 <= index < lanes for index in followed)
    # A followed lane's place follows as a viewer of the lane's own project.
    assert all(index % 2 == place % 2 for index, place in followed.items())
    # Spread: the last wave's lanes are followed as well as the first one's.
    assert max(followed) >= lanes - 2 * (lanes // sample) - 2


def test_the_steady_window_leaves_out_the_burst_and_the_drain() -> None:
    latency = 10.0
    runs = []
    # Two lanes, three rounds each: lane 1's first start is accepted late (the burst),
    # lane 0 is done first (the drain begins at 33).
    for lane, first in ((0, 0.0), (1, 4.0)):
        sent = first
        for round_ in range(3):
            finished = sent + latency + (0.5 if round_ else 3.0)  # the burst's runs wait
            followed = sent + latency + 0.2 if lane == 0 else None
            runs.append(RunTimes(lane, f"{lane}-{round_}", sent,
                                 sent + (0.1 if round_ else 0.0), followed, finished))
            sent = finished
    figures = steady(runs, lanes=2, latency=latency)
    # Window [4.0, 34.0): lane 0 ended at 13, 23.5, 34; lane 1 at 17, 27.5, 38.
    assert figures["steady_seconds"] == 30.0
    assert figures["steady_window_runs_per_s"] == round(5 / 30.0, 2)
    assert figures["steady_window_ratio"] == round(5 / 30.0 / (2 / latency), 3)
    # Cycles in it: lane 0 sent at 13 then 23.5; lane 1 at 4, 17 and 27.5.
    rate = 1 / 10.5 + 2 / 23.5
    assert figures["steady_runs_per_s"] == round(rate, 2)
    assert figures["steady_throughput_ratio"] == round(rate / (2 / latency), 3)
    # Sent and ended inside: lane 0's rounds 2 and 3, lane 1's round 2 (sent at 17).
    assert figures["steady_added_runner_p50_ms"] == 500.0
    assert figures["steady_added_p50_ms"] == 200.0


def test_no_steady_window_without_enough_rounds() -> None:
    # The last lane's run was accepted at 2 s: 8.5 s of window, less than a latency.
    one_round = [RunTimes(lane, str(lane), 0.0, lane * 1.0, None, 10.5) for lane in range(3)]
    assert steady(one_round, lanes=3, latency=10.0) == {}
    assert steady(one_round[:2], lanes=3, latency=10.0) == {}  # a lane never started


def test_lanes_ending_in_waves_count_at_their_cycles_rate() -> None:
    """A thousand lanes started together end their runs in waves; a window edge just
    before a wave leaves it out of the runs ended in the window, not out of the lanes'
    rate."""
    latency, cycle = 10.0, 10.5
    runs = [RunTimes(lane, f"{lane}-{round_}", first + round_ * cycle, first + round_ * cycle,
                     None, first + (round_ + 1) * cycle)
            for lane, first in ((0, 0.0), (1, 0.0), (2, 3.0))
            for round_ in range(4)]
    figures = steady(runs, lanes=3, latency=latency)
    assert figures["steady_throughput_ratio"] == round(latency / cycle, 3)
    assert figures["steady_window_ratio"] < figures["steady_throughput_ratio"]
