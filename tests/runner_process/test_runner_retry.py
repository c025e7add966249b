"""runner.retry: one declared backoff, followed by the sink and the worker alike."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import redis
from hypothesis import given
from hypothesis import strategies as st

from runner import retry
from runner.retry import RetryPolicy, retrying
from runner.sink import REDIS_RETRY, RETRYABLE


class Clock:
    """Stands in for time: sleeping moves it on, so no test waits for real."""

    def __init__(self) -> None:
        self.now = 0.0
        self.waits: list[float] = []

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.now += seconds


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(retry, "time", fake)
    return fake


def failing(times: int, error: Exception) -> Callable[[], str]:
    calls = iter(range(times + 1))

    def call() -> str:
        if next(calls) < times:
            raise error
        return "done"

    return call


@pytest.mark.allow_output  # each retry is logged on purpose
def test_it_waits_longer_each_time_up_to_the_longest_wait(
        clock: Clock, caplog: pytest.LogCaptureFixture) -> None:
    policy = RetryPolicy(initial=0.05, factor=2.0, max_delay=0.3, deadline=60.0,
                         retry_on=(ConnectionError,))
    assert retrying(failing(5, ConnectionError()), policy, "x: away") == "done"
    assert clock.waits == [0.05, 0.1, 0.2, 0.3, 0.3]
    assert caplog.messages == [f"x: away (ConnectionError), retrying in {wait:.2f} s"
                               for wait in clock.waits]


@pytest.mark.allow_output  # each retry is logged on purpose
def test_it_gives_up_with_the_last_error_before_the_deadline(clock: Clock) -> None:
    policy = RetryPolicy(initial=1.0, factor=2.0, max_delay=4.0, deadline=10.0,
                         retry_on=(ConnectionError,))
    with pytest.raises(ConnectionError):
        retrying(failing(100, ConnectionError()), policy, "x")
    assert clock.waits == [1.0, 2.0, 4.0]  # a fourth wait would end after 10 s


def test_it_does_not_retry_other_errors(clock: Clock) -> None:
    with pytest.raises(ValueError):
        retrying(failing(1, ValueError()), RetryPolicy(retry_on=(ConnectionError,)), "x")
    assert clock.waits == []


@given(st.floats(0.01, 5), st.floats(1.5, 4), st.floats(0.01, 10), st.floats(0, 120))
def test_no_wait_exceeds_the_longest_or_the_deadline(initial: float, factor: float,
                                                      longest: float, deadline: float) -> None:
    fake = Clock()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(retry, "time", fake)
        patch.setattr(retry.log, "disabled", True)  # thousands of warnings otherwise
        policy = RetryPolicy(initial=initial, factor=factor, max_delay=longest,
                             deadline=deadline, retry_on=(ConnectionError,))
        with pytest.raises(ConnectionError):
            retrying(failing(100_000, ConnectionError()), policy, "x")
    assert fake.now <= deadline
    assert all(wait <= max(initial, longest) for wait in fake.waits)


def test_the_sink_and_the_worker_retry_redis_outages_only() -> None:
    assert REDIS_RETRY.retry_on == RETRYABLE
    assert issubclass(redis.ReadOnlyError, REDIS_RETRY.retry_on)
    assert (REDIS_RETRY.initial, REDIS_RETRY.max_delay, REDIS_RETRY.deadline) == (0.05, 2.0, 60.0)
