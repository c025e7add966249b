"""The internal listener's upstream waits (KIONGA_MODEL_TIMEOUT_SECONDS,
KIONGA_CALL_TIMEOUT_SECONDS) may be lowered, never raised past their defaults: with the
wait for a call slot they must end before the runner's client gives up (its 30 s
KIONGA_RUNNER_HTTP_TIMEOUT default), so the runner gets the listener's clean 503
`resource_unavailable` and not a timeout of its own (docs/decisions/upstream-waits-bounded.md)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from kionga.settings import CALL_TIMEOUT_MAX_SECONDS, MODEL_TIMEOUT_MAX_SECONDS
from runner.settings import DEFAULT_HTTP_TIMEOUT_SECONDS
from runs.internal.actions import SLOT_WAIT
from tests.stack import ROOT

READ = ("import kionga.settings as s; "
        "print(s.KIONGA_MODEL_TIMEOUT_SECONDS, s.KIONGA_CALL_TIMEOUT_SECONDS)")


def settings_with(**values: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("KIONGA_MODEL_TIMEOUT_SECONDS", "KIONGA_CALL_TIMEOUT_SECONDS")}
    return subprocess.run([sys.executable, "-c", READ], cwd=ROOT, env={**env, **values},
                          capture_output=True, text=True, timeout=60)


def test_the_defaults_end_before_the_runners_client_gives_up() -> None:
    assert max(MODEL_TIMEOUT_MAX_SECONDS, CALL_TIMEOUT_MAX_SECONDS) + SLOT_WAIT \
        < DEFAULT_HTTP_TIMEOUT_SECONDS
    read = settings_with()
    assert read.returncode == 0, read.stderr
    assert read.stdout.split() == [str(MODEL_TIMEOUT_MAX_SECONDS), str(CALL_TIMEOUT_MAX_SECONDS)]


def test_lower_waits_are_taken() -> None:
    read = settings_with(KIONGA_MODEL_TIMEOUT_SECONDS="8", KIONGA_CALL_TIMEOUT_SECONDS="5")
    assert read.returncode == 0, read.stderr
    assert read.stdout.split() == ["8", "5"]


@pytest.mark.parametrize(("name", "value", "most"), [
    ("KIONGA_MODEL_TIMEOUT_SECONDS", str(MODEL_TIMEOUT_MAX_SECONDS + 1), MODEL_TIMEOUT_MAX_SECONDS),
    ("KIONGA_CALL_TIMEOUT_SECONDS", str(CALL_TIMEOUT_MAX_SECONDS + 1), CALL_TIMEOUT_MAX_SECONDS),
    ("KIONGA_MODEL_TIMEOUT_SECONDS", "0", MODEL_TIMEOUT_MAX_SECONDS),
])
def test_a_wait_past_its_bound_stops_the_start_naming_it(name: str, value: str,
                                                         most: int) -> None:
    read = settings_with(**{name: value})
    assert read.returncode != 0
    assert f"{name} must be between 1 and {most}, got {value}" in read.stderr
