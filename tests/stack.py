"""The real product on loopback for end-to-end tests and benchmarks.

Starts the same commands as the Procfile: the public gateway and the internal
listener (uvicorn, ASGI), the event ingester, and the runner (a Celery worker on
its own queue), against real PostgreSQL and Redis. Everything talks over real
HTTP and Redis; nothing is mocked.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import redis

from tests.secret_key import TEST_SECRET_KEY

ROOT = Path(__file__).resolve().parent.parent
VENV_BIN = Path(sys.executable).parent
RUNNER_TOKEN = "e2e-runner-token-0123456789abcdef"
# As in the Procfile: httptools, with the bound on a request's head that h11 had built in
# (kionga.http_protocol; the gateway's also cuts its streams when it stops); X-Forwarded-For
# only from KIONGA_TRUSTED_PROXIES (kionga.proxies), never uvicorn's default.
GATEWAY_HTTP = ["--no-proxy-headers", "--http", "kionga.http_protocol:GatewayHttpToolsProtocol"]
INTERNAL_HTTP = ["--no-proxy-headers", "--http", "kionga.http_protocol:BoundedHttpToolsProtocol"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Stack:
    database_url: str
    max_runs: int = 8
    gateway_workers: int = 1
    # Start only these processes (default: all of commands()), with these variables on top.
    only: tuple[str, ...] = ()
    extra_env: dict[str, str] = field(default_factory=dict)
    # KIONGA_STREAM_RECHECK_SECONDS of the gateway (None: the product's default).
    stream_recheck_seconds: int | None = None
    # The Django settings of its processes (the e2e tests: tests/stack_settings.py).
    settings_module: str = "kionga.settings"
    log_dir: Path = field(default_factory=lambda: ROOT / "var" / "e2e-logs")
    gateway_port: int = field(default_factory=free_port)
    internal_port: int = field(default_factory=free_port)
    runner_port: int = field(default_factory=free_port)
    redis_port: int = field(default_factory=free_port)
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.gateway_port}"

    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
        env.update(
            DJANGO_SETTINGS_MODULE=self.settings_module,
            DATABASE_URL=self.database_url,
            REDIS_URL=self.redis_url,
            KIONGA_AGENT_DESIGNER_RUNNER_URL=f"http://127.0.0.1:{self.runner_port}",
            KIONGA_AGENT_DESIGNER_RUNNER_TOKEN=RUNNER_TOKEN,
            KIONGA_AGENT_DESIGNER_CALLBACK_URL=f"http://127.0.0.1:{self.internal_port}/api/v1",
            KIONGA_DESIGNER_RUNNER_TOKEN=RUNNER_TOKEN,
            KIONGA_DESIGNER_PORT=str(self.runner_port),
            KIONGA_DESIGNER_MAX_RUNS=str(self.max_runs),
            MLAIOPS_LLM_BACKEND="mock",
            # Evaluations' judge: the model with this ID in the evaluated project (the
            # end-to-end tests point it at a scripted judge on loopback).
            KIONGA_JUDGE_MODEL="resource:judge",
            KIONGA_JUDGE_TIMEOUT_SECONDS="3",
            # Benchmarks drive one user far past a person's rate.
            KIONGA_THROTTLE_USER="1000000/minute",
            PYTHONUNBUFFERED="1",
            # Browser tests load the admin's and the UIs' assets from the gateway itself.
            KIONGA_SERVE_STATIC="1",
        )
        # Benchmarks start stacks outside pytest (no conftest): the same fixed key.
        env.setdefault("KIONGA_SECRET_KEYS", TEST_SECRET_KEY)
        env.update(self.extra_env)
        if self.stream_recheck_seconds is not None:
            env["KIONGA_STREAM_RECHECK_SECONDS"] = str(self.stream_recheck_seconds)
        return env

    def commands(self) -> dict[str, list[str]]:
        uvicorn = [str(VENV_BIN / "uvicorn"), "--lifespan", "on", "--host", "127.0.0.1",
                   "--no-access-log"]
        return {
            "gateway": [*uvicorn, *GATEWAY_HTTP, "--port", str(self.gateway_port), "--workers",
                        str(self.gateway_workers), "kionga.asgi:application"],
            "internal": [*uvicorn, *INTERNAL_HTTP, "--port", str(self.internal_port),
                         "kionga.internal_asgi:application"],
            "events": [sys.executable, "manage.py", "run_events"],
            "runner": self.runner_command(),
            # The gateway's own tasks (evaluations advance on them), as the Procfile's beat.
            "worker": [str(VENV_BIN / "celery"), "-A", "kionga", "worker", "-Q", "gateway",
                       "--loglevel", "WARNING", "--concurrency", "2", "--without-gossip",
                       "--without-mingle", "--without-heartbeat",
                       "-n", f"gateway-{self.gateway_port}@%h"],
        }

    def runner_command(self) -> list[str]:
        return [str(VENV_BIN / "celery"), "-A", "runner.celery_app", "worker", "-Q", "runner",
                "--loglevel", "WARNING",
                "--without-gossip", "--without-mingle", "--without-heartbeat",
                "-n", f"runner-{self.runner_port}@%h"]

    def start(self) -> Stack:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        self.start_redis()
        for name, command in self.commands().items():
            if not self.only or name in self.only:
                self.start_process(name, command)
        self.wait_ready()
        return self

    def start_redis(self) -> None:
        """A Redis of the stack's own (no persistence, like the CI machine's), so tests
        may restart it without disturbing anything else."""
        self.start_process("redis", ["redis-server", "--port", str(self.redis_port),
                                     "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        client = redis.Redis.from_url(self.redis_url)
        deadline = time.monotonic() + 10
        while True:
            try:
                client.ping()
                return
            except redis.ConnectionError:
                self.assert_alive()
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def restart_redis(self) -> None:
        process = self.processes.pop("redis")
        process.terminate()
        process.wait()
        self.start_redis()

    def start_process(self, name: str, command: list[str]) -> None:
        log = (self.log_dir / f"{name}.log").open("ab")
        self.processes[name] = subprocess.Popen(
            command, cwd=ROOT, env=self.env(), stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def wait_ready(self, timeout: float = 60.0) -> None:
        checks: dict[str, Callable[[], bool]] = {
            "gateway": lambda: _ok(f"{self.base_url}/healthz"),
            "internal": lambda: _ok(f"http://127.0.0.1:{self.internal_port}/healthz"),
            "runner": lambda: _ok(f"http://127.0.0.1:{self.runner_port}/health",
                                  {"Authorization": f"Bearer {RUNNER_TOKEN}"}),
        }
        deadline = time.monotonic() + timeout
        for name, check in checks.items():
            while name in self.processes and not check():
                self.assert_alive()
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{name} did not become ready; see {self.log_dir}")
                time.sleep(0.1)

    def assert_alive(self) -> None:
        for name, process in self.processes.items():
            if process.poll() is not None:
                tail = (self.log_dir / f"{name}.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{name} exited with {process.returncode}:\n{tail}")

    def kill_runner(self) -> None:
        """kill -9 the whole runner (parent and its pool children), as a crash would."""
        process = self.processes.pop("runner")
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def restart_runner(self) -> None:
        self.start_process("runner", self.runner_command())
        self.wait_ready()

    def stop(self) -> None:
        # Redis last, so the others shut down cleanly.
        ordered = sorted(self.processes.items(), key=lambda item: item[0] == "redis")
        self.processes = dict(ordered)
        for process in self.processes.values():
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for process in self.processes.values():
            try:
                process.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.processes.clear()


def _ok(url: str, headers: dict[str, str] | None = None) -> bool:
    try:
        return httpx.get(url, headers=headers, timeout=1.0).status_code == 200
    except httpx.HTTPError:
        return False
