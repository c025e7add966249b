"""System checks reject bad configuration before the gateway starts."""

from __future__ import annotations

import pytest
from django.test import override_settings

from kionga.checks import check_limits, check_runner_token, check_secret_patterns


def test_it_accepts_the_default_configuration() -> None:
    assert check_secret_patterns(None) == []
    assert check_limits(None) == []
    assert check_runner_token(None) == []


@override_settings(KIONGA_SECRET_PATTERNS=[r"ok-\d+", r"(a)\1"])
def test_it_rejects_a_secret_pattern_that_is_not_re2() -> None:
    errors = check_secret_patterns(None)
    assert [error.id for error in errors] == ["kionga.E001"]
    assert r"(a)\1" in errors[0].msg


@override_settings(KIONGA_DESIGNER_MAX_RUNS=0, KIONGA_RUN_RETENTION_DAYS=0)
def test_it_rejects_non_positive_limits() -> None:
    assert [error.id for error in check_limits(None)] == ["kionga.E002", "kionga.E003"]


@override_settings(
    KIONGA_AGENT_DESIGNER_RUNNER_URL="http://runner:9100",
    KIONGA_AGENT_DESIGNER_RUNNER_TOKEN="short",
)
def test_it_rejects_a_short_runner_token_when_runs_are_enabled() -> None:
    assert [error.id for error in check_runner_token(None)] == ["kionga.E004"]


@override_settings(KIONGA_SECRET_PATTERNS=[r"\p{Lu}{3}-\d{4}", r"secret(?=x)"])
def test_it_validates_secret_patterns_with_the_runners_engine() -> None:
    # The RE2-only pattern passes (the runner compiles it too); the Python-only
    # lookahead is refused (the runner would refuse it at start).
    from runner.env import EnvError
    from runner.settings import load_settings

    errors = check_secret_patterns(None)
    assert [error.msg.split(" is not")[0] for error in errors] == [
        r"KIONGA_SECRET_PATTERNS: secret(?=x)"]
    env = {"KIONGA_DESIGNER_RUNNER_TOKEN": "x" * 16}
    assert load_settings({**env, "KIONGA_SECRET_PATTERNS": r"\p{Lu}{3}-\d{4}"})
    with pytest.raises(EnvError, match="is not valid RE2"):
        load_settings({**env, "KIONGA_SECRET_PATTERNS": r"secret(?=x)"})
