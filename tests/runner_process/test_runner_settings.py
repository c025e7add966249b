"""runner.settings: the environment only, strictly parsed; a short token stops the start."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.env import EnvError
from runner.redact import DEFAULT_SECRET_PATTERNS
from runner.settings import load_settings

TOKEN = "0123456789abcdef"


def env(**values: str) -> dict[str, str]:
    return {"KIONGA_DESIGNER_RUNNER_TOKEN": TOKEN, **values}


def test_it_reads_the_defaults() -> None:
    settings = load_settings(env())
    assert settings.token == TOKEN
    assert (settings.port, settings.max_runs, settings.bind_host) == (9100, 1000, "127.0.0.1")
    # Two pool processes, each hosting its half of the runs on one event loop.
    assert (settings.processes, settings.process_runs) == (2, 500)
    assert settings.redis_url == "redis://127.0.0.1:6379/0"
    assert (settings.llm.backend, settings.llm.model, settings.llm.base_url) == ("mock", "", "")
    assert settings.secret_patterns == DEFAULT_SECRET_PATTERNS
    assert settings.http_timeout == 30.0


def test_it_reads_every_variable() -> None:
    settings = load_settings(env(
        KIONGA_DESIGNER_PORT="9200", KIONGA_DESIGNER_MAX_RUNS="3", REDIS_URL="redis://r:1/2",
        MLAIOPS_LLM_BACKEND="openai", MLAIOPS_LLM_MODEL="m1",
        MLAIOPS_LLM_BASE_URL="http://llm/v1", KIONGA_RUNNER_HTTP_TIMEOUT="2.5",
        KIONGA_BIND_HOST="0.0.0.0", KIONGA_RUNNER_PROCESSES="2"))
    assert (settings.port, settings.max_runs, settings.redis_url) == (9200, 3, "redis://r:1/2")
    assert (settings.processes, settings.process_runs) == (2, 2)  # 3 runs: 2 + 1
    assert (settings.llm.backend, settings.llm.model, settings.llm.base_url) == (
        "openai", "m1", "http://llm/v1")
    assert (settings.http_timeout, settings.bind_host) == (2.5, "0.0.0.0")


@pytest.mark.parametrize("token", ["", "short", "0123456789abcde"])
def test_it_refuses_a_missing_or_short_token(token: str) -> None:
    with pytest.raises(EnvError, match="KIONGA_DESIGNER_RUNNER_TOKEN.*at least 16"):
        load_settings({"KIONGA_DESIGNER_RUNNER_TOKEN": token})


def test_it_runs_no_more_processes_than_runs() -> None:
    settings = load_settings(env(KIONGA_DESIGNER_MAX_RUNS="1", KIONGA_RUNNER_PROCESSES="4"))
    assert (settings.processes, settings.process_runs) == (1, 1)


def test_it_reads_the_token_from_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("from-a-file-0123456789\n")
    settings = load_settings({"KIONGA_DESIGNER_RUNNER_TOKEN_FILE": str(secret)})
    assert settings.token == "from-a-file-0123456789"


@pytest.mark.parametrize(("name", "value", "message"), [
    ("KIONGA_DESIGNER_MAX_RUNS", "eight", "KIONGA_DESIGNER_MAX_RUNS must be an integer"),
    ("KIONGA_DESIGNER_MAX_RUNS", "0", "KIONGA_DESIGNER_MAX_RUNS must be between 1"),
    ("KIONGA_DESIGNER_PORT", "9100x", "KIONGA_DESIGNER_PORT must be an integer"),
    ("KIONGA_RUNNER_PROCESSES", "0", "KIONGA_RUNNER_PROCESSES must be between 1"),
    ("KIONGA_DESIGNER_PORT", "70000", "KIONGA_DESIGNER_PORT must be between"),
    ("KIONGA_RUNNER_HTTP_TIMEOUT", "soon", "KIONGA_RUNNER_HTTP_TIMEOUT must be a number"),
    ("KIONGA_RUNNER_HTTP_TIMEOUT", "0", "KIONGA_RUNNER_HTTP_TIMEOUT must be a positive"),
    ("MLAIOPS_LLM_BACKEND", "gpt", "MLAIOPS_LLM_BACKEND must be one of mock, openai"),
    ("KIONGA_SECRET_PATTERNS", "ok,(unclosed", "KIONGA_SECRET_PATTERNS: '\\(unclosed'"),
    ("KIONGA_SECRET_PATTERNS", "[1]", "KIONGA_SECRET_PATTERNS must be a JSON array of strings"),
])
def test_it_names_the_variable_of_a_bad_value(name: str, value: str, message: str) -> None:
    with pytest.raises(EnvError, match=message):
        load_settings(env(**{name: value}))


def test_it_needs_a_base_url_for_the_openai_backend() -> None:
    with pytest.raises(EnvError, match="MLAIOPS_LLM_BASE_URL is required"):
        load_settings(env(MLAIOPS_LLM_BACKEND="openai"))


@pytest.mark.parametrize(("value", "expected"), [
    ("a+, b+ ,", ("a+", "b+")),
    ("\\d{3,5}\nsecret-[0-9]+\n", ("\\d{3,5}", "secret-[0-9]+")),  # one per line: commas kept
    ('["\\\\d{3,5}", "x"]', ("\\d{3,5}", "x")),
    ("", ()),
])
def test_it_reads_secret_patterns_in_three_forms(value: str, expected: tuple[str, ...]) -> None:
    assert load_settings(env(KIONGA_SECRET_PATTERNS=value)).secret_patterns == expected


def test_a_process_hosts_every_slot_and_every_parked_run() -> None:
    # Runs waiting on approvals hold no slot: a process may host them on top.
    assert load_settings(env()).process_cap == 2000
    assert load_settings(env(KIONGA_DESIGNER_MAX_RUNS="10",
                             KIONGA_MAX_PARKED_RUNS="50")).process_cap == 60
