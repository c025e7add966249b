"""The public listener as its own process (uvicorn kionga.asgi, as the Procfile starts it)
on a free loopback port, serving the test database, with settings of the test's own:
for tests of what the gateway process does (its stream budget, throttles, hot routes)
over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tests.internal_listener import uvicorn_process


@contextmanager
def public_gateway(**env: str) -> Iterator[str]:
    """Start `uvicorn kionga.asgi:application` with these environment variables more;
    yields its base URL."""
    with uvicorn_process("kionga.asgi:application", "the gateway", **env) as base:
        yield base
