"""The public listener as its own process (uvicorn kionga.asgi, as the Procfile starts it)
on a free loopback port, serving the test database, with settings of the test's own:
for tests of what the gateway process does (its stream budget, throttles, hot routes)
over real HTTP."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from tests.internal_listener import free_port, uvicorn_process, uvicorn_server


@contextmanager
def public_gateway(**env: str) -> Iterator[str]:
    """Start `uvicorn kionga.asgi:application` with these environment variables more;
    yields its base URL."""
    with uvicorn_process("kionga.asgi:application", "the gateway", **env) as base:
        yield base


@contextmanager
def public_gateway_process(**env: str) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """public_gateway, yielding (its base URL, its process)."""
    with uvicorn_server("kionga.asgi:application", "the gateway", free_port(), env) as started:
        yield started
