"""The runner's configuration, from the environment only.

The runner imports no Django settings (it holds no database credentials), so this
module is its whole configuration. Parsing is strict: a malformed value stops the
start with a message naming the variable, rather than silently meaning a default.
Like the gateway's env readers, every variable may be given as a file instead
(`NAME_FILE=/path`, for mounted secrets).
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from runner.protocol import MIN_TOKEN_LENGTH
from runner.redact import DEFAULT_SECRET_PATTERNS, pattern_problems
from runner.request import LLMConfig

LLM_BACKENDS = ("mock", "openai")


class SettingsError(ValueError):
    """A variable is missing or unusable: the runner must not start."""


@dataclass(frozen=True)
class RunnerSettings:
    token: str
    port: int
    bind_host: str
    max_runs: int
    redis_url: str
    llm: LLMConfig
    secret_patterns: tuple[str, ...]
    http_timeout: float


def load_settings(environ: Mapping[str, str] | None = None) -> RunnerSettings:
    env = _Env(os.environ if environ is None else environ)
    token = env.text("KIONGA_DESIGNER_RUNNER_TOKEN")
    if len(token) < MIN_TOKEN_LENGTH:
        raise SettingsError(
            f"KIONGA_DESIGNER_RUNNER_TOKEN must be set to at least {MIN_TOKEN_LENGTH} "
            f"characters (got {len(token)}); the runner refuses to start without it")
    backend = env.text("MLAIOPS_LLM_BACKEND", "mock").strip() or "mock"
    if backend not in LLM_BACKENDS:
        raise SettingsError(f"MLAIOPS_LLM_BACKEND must be one of {', '.join(LLM_BACKENDS)}, "
                            f"got {backend!r}")
    base_url = env.text("MLAIOPS_LLM_BASE_URL").strip()
    if backend == "openai" and not base_url:
        raise SettingsError("MLAIOPS_LLM_BASE_URL is required when MLAIOPS_LLM_BACKEND=openai")
    return RunnerSettings(
        token=token,
        port=env.integer("KIONGA_DESIGNER_PORT", 9100, low=1, high=65535),
        # Same variable as the Procfile's other listeners; Compose sets 0.0.0.0.
        bind_host=env.text("KIONGA_BIND_HOST").strip() or "127.0.0.1",
        max_runs=env.integer("KIONGA_DESIGNER_MAX_RUNS", 8, low=1, high=10_000),
        redis_url=env.text("REDIS_URL").strip() or "redis://127.0.0.1:6379/0",
        llm=LLMConfig(backend=backend, model=env.text("MLAIOPS_LLM_MODEL").strip(),
                      base_url=base_url),
        secret_patterns=env.patterns("KIONGA_SECRET_PATTERNS", DEFAULT_SECRET_PATTERNS),
        http_timeout=env.number("KIONGA_RUNNER_HTTP_TIMEOUT", 30.0),
    )


class _Env:
    def __init__(self, environ: Mapping[str, str]) -> None:
        self._environ = environ

    def raw(self, name: str) -> str | None:
        file_name = self._environ.get(f"{name}_FILE")
        if file_name:
            try:
                # Secret files usually end with a newline the secret does not contain.
                return Path(file_name).read_text(encoding="utf-8").rstrip("\r\n")
            except OSError as exc:
                raise SettingsError(f"{name}_FILE={file_name!r} cannot be read: {exc}") from None
        return self._environ.get(name)

    def text(self, name: str, default: str = "") -> str:
        value = self.raw(name)
        return default if value is None else value

    def integer(self, name: str, default: int, *, low: int, high: int) -> int:
        value = self.raw(name)
        if value is None or not value.strip():
            return default
        try:
            number = int(value.strip())
        except ValueError:
            raise SettingsError(f"{name} must be an integer, got {value!r}") from None
        if not low <= number <= high:
            raise SettingsError(f"{name} must be between {low} and {high}, got {number}")
        return number

    def number(self, name: str, default: float) -> float:
        value = self.raw(name)
        if value is None or not value.strip():
            return default
        try:
            number = float(value.strip())
        except ValueError:
            raise SettingsError(f"{name} must be a number of seconds, got {value!r}") from None
        if not math.isfinite(number) or number <= 0:
            raise SettingsError(f"{name} must be a positive number of seconds, got {value!r}")
        return number

    def patterns(self, name: str, default: tuple[str, ...]) -> tuple[str, ...]:
        """Regexes: a JSON array, one per line, or comma-separated (in that order of preference).

        Regexes such as `\\d{3,5}` contain commas: write them one per line or as JSON.
        """
        value = self.raw(name)
        if value is None:
            return default
        if value.lstrip().startswith("["):
            items = _json_strings(name, value)
        else:
            separator = "\n" if "\n" in value else ","
            items = [item.strip() for item in value.split(separator)]
        patterns = tuple(item for item in items if item)
        for pattern, reason in pattern_problems(patterns)[:1]:
            raise SettingsError(f"{name}: {pattern!r} is not valid RE2: {reason}")
        return patterns


def _json_strings(name: str, value: str) -> list[str]:
    try:
        parsed = json.loads(value)
    except json.JSONDecodeError as exc:
        raise SettingsError(f"{name} is not a valid JSON array: {exc}") from None
    if not isinstance(parsed, list) or not all(isinstance(item, str) for item in parsed):
        raise SettingsError(f"{name} must be a JSON array of strings")
    return parsed
