"""The internal listener as its own process (uvicorn kionga.internal_asgi, as the
Procfile starts it) on a free loopback port, serving the test database: for tests that
drive the runner's real client against it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.db import connection

from tests.stack import GATEWAY_HTTP, INTERNAL_HTTP


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def database_url_of_tests() -> str:
    db = connection.settings_dict
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


@contextmanager
def internal_listener() -> Iterator[str]:
    """Start `uvicorn kionga.internal_asgi:application`; yields the runner's callback URL."""
    # DJANGO_SETTINGS_MODULE says public on purpose: internal_asgi must override it.
    with uvicorn_process("kionga.internal_asgi:application", "the internal listener") as base:
        yield f"{base}/api/v1"


@contextmanager
def internal_listener_process(port: int | None = None,
                              **env: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """internal_listener on `port` (default: a free one), with these environment
    variables more; yields (the runner's callback URL, the process)."""
    with uvicorn_server("kionga.internal_asgi:application", "the internal listener",
                        port or free_port(), env) as (base, process):
        yield f"{base}/api/v1", process


@contextmanager
def uvicorn_process(app: str, name: str, **env: str) -> Iterator[str]:
    """Start `uvicorn APP` as the Procfile does, on the test database, with these
    environment variables more; yields its base URL once its /healthz answers."""
    with uvicorn_server(app, name, free_port(), env) as (base, _process):
        yield base


@contextmanager
def uvicorn_server(app: str, name: str, port: int,
                   env: dict[str, str]) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    environment = {**os.environ, "DATABASE_URL": database_url_of_tests(),
                   "DJANGO_SETTINGS_MODULE": "kionga.settings", **env}
    http = GATEWAY_HTTP if app == "kionga.asgi:application" else INTERNAL_HTTP
    command = [sys.executable, "-m", "uvicorn", app, "--lifespan", "on", *http,
               "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
               "--no-access-log"]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, cwd=Path(settings.BASE_DIR), env=environment,
                                   stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_until_up(f"http://127.0.0.1:{port}/healthz", process, log, name)
            yield f"http://127.0.0.1:{port}", process
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # streams still open: no graceful end
                process.kill()
                process.wait()


def wait_until_up(url: str, process: subprocess.Popen[bytes], log: Any, name: str,
                  seconds: float = 30) -> None:
    """Until `url` answers 200; the test fails with the process's log if it exits first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            pytest.fail(f"{name} exited:\n{log.read().decode()}")
        try:
            # urllib, not httpx: httpx logs each request, and this runs in setup.
            with urllib.request.urlopen(url, timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.05)
    pytest.fail(f"{name} did not start within {seconds:g} s")
