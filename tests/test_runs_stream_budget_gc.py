"""A stream's place given back by the garbage collector never hangs the thread it
interrupts (runs.stream_limits). A response in a reference cycle is freed by the cyclic
collector, which runs its finalizer (the place's release) in whichever thread it
interrupts; when that thread was inside StreamBudget.open, a release that took the
budget's lock waited on itself, and the gateway worker answered nothing more."""

from __future__ import annotations

import gc
import threading
import weakref
from typing import Any

import pytest

from runs.stream_limits import StreamBudget


class _Response:
    """Stands for a response that ended up in a reference cycle."""

    def __init__(self) -> None:
        self.me = self


def _garbage_holding(release: Any) -> None:
    response = _Response()
    weakref.finalize(response, release)  # as runs.views and runs.start_stream do


@pytest.fixture
def budget(settings: Any) -> StreamBudget:
    settings.KIONGA_MAX_STREAMS_PER_USER = 3
    settings.KIONGA_MAX_STREAMS = 10
    return StreamBudget()


def _collecting_inside_check(budget: StreamBudget, monkeypatch: pytest.MonkeyPatch) -> None:
    """The collector runs while open() or check() holds the budget's lock."""
    check = budget._check

    def check_after_collecting(user_id: int) -> None:
        gc.collect()
        check(user_id)

    monkeypatch.setattr(budget, "_check", check_after_collecting)


def _within(seconds: float, work: Any) -> Any:
    done: list[Any] = []
    thread = threading.Thread(target=lambda: done.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert done, "the thread hung on the stream budget's lock"
    return done[0]


def test_a_release_by_the_collector_inside_open_does_not_hang(
        budget: StreamBudget, monkeypatch: pytest.MonkeyPatch) -> None:
    _garbage_holding(budget.open(1))
    _collecting_inside_check(budget, monkeypatch)
    _within(5, lambda: budget.open(1))
    assert budget.open_count() == 1  # the collected place is free, the new one counted


def test_a_release_by_the_collector_inside_check_does_not_hang(
        budget: StreamBudget, monkeypatch: pytest.MonkeyPatch) -> None:
    _garbage_holding(budget.open(2))
    _collecting_inside_check(budget, monkeypatch)
    _within(5, lambda: budget.check(2))
    assert budget.open_count() == 0


def test_places_given_back_count_once_and_free_the_share(budget: StreamBudget) -> None:
    releases = [budget.open(7) for _ in range(3)]
    with pytest.raises(Exception, match="3 event streams"):
        budget.open(7)
    releases[0]()
    releases[0]()  # twice: still one place
    budget.open(7)
    with pytest.raises(Exception, match="3 event streams"):
        budget.open(7)
    for release in releases:
        release()
    assert budget.open_count() == 1
