"""The public listener as its own process (uvicorn kionga.asgi, as the Procfile starts it)
on a free loopback port, serving the test database, with settings of the test's own:
for tests of what the gateway process does (its stream budget, throttles, hot routes)
over real HTTP."""

from __future__ import annotations

import os
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

from tests.internal_listener import database_url_of_tests, free_port


@contextmanager
def public_gateway(**env: str) -> Iterator[str]:
    """Start `uvicorn kionga.asgi:application` with these environment variables more;
    yields its base URL."""
    port = free_port()
    environment = {**os.environ, "DATABASE_URL": database_url_of_tests(),
                   "DJANGO_SETTINGS_MODULE": "kionga.settings", **env}
    command = [sys.executable, "-m", "uvicorn", "kionga.asgi:application", "--lifespan", "off",
               "--host", "127.0.0.1", "--port", str(port), "--log-level", "warning",
               "--no-access-log"]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(command, cwd=Path(settings.BASE_DIR), env=environment,
                                   stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_until_up(f"http://127.0.0.1:{port}/healthz", process, log)
            yield f"http://127.0.0.1:{port}"
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:  # streams still open: no graceful end
                process.kill()
                process.wait()


def _wait_until_up(url: str, process: subprocess.Popen[bytes], log: Any) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            log.seek(0)
            pytest.fail(f"the gateway exited:\n{log.read().decode()}")
        try:
            # urllib, not httpx: httpx logs each request, and this runs in setup.
            with urllib.request.urlopen(url, timeout=1) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.05)
    pytest.fail("the gateway did not start within 30 s")
