"""The runner's configuration, from the environment only.

The runner imports no Django settings (it holds no database credentials), so this
module is its whole configuration. Parsing is strict: a malformed value stops the
start with a message naming the variable, rather than silently meaning a default.
It reads through runner.env, as the gateway's settings do, so every variable may be
given as a file instead (`NAME_FILE=/path`, for mounted secrets).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from runner.env import Env, EnvError
from runner.protocol import MIN_TOKEN_LENGTH
from runner.redact import DEFAULT_SECRET_PATTERNS, pattern_problems
from runner.request import LLMConfig

LLM_BACKENDS = ("mock", "openai")
# Runs in flight across the runner, and its pool processes: what a 2-core runner
# holds when its runs wait (docs/decisions/many-runs-per-process.md).
DEFAULT_MAX_RUNS = 1000
DEFAULT_PROCESSES = 2
# How long the runner's client waits for an answer of the gateway's internal listener
# (KIONGA_RUNNER_HTTP_TIMEOUT): the listener's own upstream waits end before it.
DEFAULT_HTTP_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class RunnerSettings:
    token: str
    port: int
    bind_host: str
    max_runs: int
    # Pool processes (Celery's concurrency), each one event loop hosting at most
    # process_runs runs at once (runner.host).
    processes: int
    redis_url: str
    llm: LLMConfig
    secret_patterns: tuple[str, ...]
    http_timeout: float
    # Runs waiting on approvals hold no slot (docs/decisions/parked-approval-runs.md):
    # the gateway parks at most this many (KIONGA_MAX_PARKED_RUNS, 0 = max_runs).
    max_parked: int = 0

    @property
    def process_runs(self) -> int:
        """One process's cap: its part of max_runs, rounded up."""
        return -(-self.max_runs // self.processes)

    @property
    def process_cap(self) -> int:
        """The most runs one process hosts: every slot and every parked run."""
        return self.max_runs + (self.max_parked or self.max_runs)


def load_settings(environ: Mapping[str, str] | None = None) -> RunnerSettings:
    env = Env(environ)
    token = env.text("KIONGA_DESIGNER_RUNNER_TOKEN")
    if len(token) < MIN_TOKEN_LENGTH:
        raise EnvError(
            f"KIONGA_DESIGNER_RUNNER_TOKEN must be set to at least {MIN_TOKEN_LENGTH} "
            f"characters (got {len(token)}); the runner refuses to start without it")
    backend = env.text("MLAIOPS_LLM_BACKEND", "mock").strip() or "mock"
    if backend not in LLM_BACKENDS:
        raise EnvError(f"MLAIOPS_LLM_BACKEND must be one of {', '.join(LLM_BACKENDS)}, "
                       f"got {backend!r}")
    base_url = env.text("MLAIOPS_LLM_BASE_URL").strip()
    if backend == "openai" and not base_url:
        raise EnvError("MLAIOPS_LLM_BASE_URL is required when MLAIOPS_LLM_BACKEND=openai")
    max_runs = env.integer("KIONGA_DESIGNER_MAX_RUNS", DEFAULT_MAX_RUNS, within=(1, 10_000))
    return RunnerSettings(
        token=token,
        port=env.integer("KIONGA_DESIGNER_PORT", 9100, within=(1, 65535)),
        # Same variable as the Procfile's other listeners; Compose sets 0.0.0.0.
        bind_host=env.text("KIONGA_BIND_HOST").strip() or "127.0.0.1",
        max_runs=max_runs,
        processes=min(max_runs, env.integer("KIONGA_RUNNER_PROCESSES", DEFAULT_PROCESSES,
                                            within=(1, 64))),
        redis_url=env.text("REDIS_URL").strip() or "redis://127.0.0.1:6379/0",
        llm=LLMConfig(backend=backend, model=env.text("MLAIOPS_LLM_MODEL").strip(),
                      base_url=base_url),
        secret_patterns=_secret_patterns(env),
        http_timeout=env.seconds("KIONGA_RUNNER_HTTP_TIMEOUT", DEFAULT_HTTP_TIMEOUT_SECONDS),
        max_parked=env.integer("KIONGA_MAX_PARKED_RUNS", 0, within=(0, 1_000_000)),
    )


def _secret_patterns(env: Env) -> tuple[str, ...]:
    """The redaction regexes, refused at start unless RE2 compiles them all."""
    patterns = tuple(env.strings("KIONGA_SECRET_PATTERNS", DEFAULT_SECRET_PATTERNS))
    for pattern, reason in pattern_problems(patterns)[:1]:
        raise EnvError(f"KIONGA_SECRET_PATTERNS: {pattern!r} is not valid RE2: {reason}")
    return patterns
