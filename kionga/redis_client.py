"""Redis connections of the gateway: one sync client per process, async ones per event loop.

The async client serves event streams, each holding a connection while it waits: its
pool has room for every stream the process may serve (KIONGA_MAX_STREAMS, enforced by
runs.stream_limits) plus other commands, and a caller finding it full waits a moment
for a connection instead of failing as if Redis were down.
"""

from __future__ import annotations

import asyncio
from functools import cache
from typing import Any, Final

import redis
import redis.asyncio as aioredis
from django.conf import settings
from redis.asyncio.retry import Retry as AsyncRetry
from redis.backoff import ExponentialBackoff
from redis.connection import parse_url
from redis.retry import Retry


@cache
def sync_redis() -> redis.Redis:
    return redis.Redis.from_url(
        settings.REDIS_URL, health_check_interval=30,
        retry=Retry(ExponentialBackoff(cap=1.0, base=0.05), 5),
        retry_on_error=[redis.ConnectionError, redis.TimeoutError],
    )


_async_clients: dict[int, aioredis.Redis] = {}

# Connections beyond the stream budget, for commands that are not streams.
POOL_RESERVE: Final = 16
POOL_WAIT_SECONDS: Final = 5.0


def async_pool_size() -> int:
    return int(settings.KIONGA_MAX_STREAMS) + POOL_RESERVE


def async_redis() -> aioredis.Redis:
    """A client bound to the running loop (an asyncio client must not cross loops)."""
    loop_id = id(asyncio.get_running_loop())
    client = _async_clients.get(loop_id)
    if client is None:
        # Reads may block (XREAD BLOCK) up to the SSE keep-alive interval: allow more.
        # After a Redis restart the pooled connections are dead: retry on a new one.
        pool = aioredis.BlockingConnectionPool.from_url(
            settings.REDIS_URL, max_connections=async_pool_size(), timeout=POOL_WAIT_SECONDS,
            health_check_interval=30, socket_timeout=60,
            retry=AsyncRetry(ExponentialBackoff(cap=1.0, base=0.05), 5),
            retry_on_error=[redis.ConnectionError, redis.TimeoutError],
        )
        client = aioredis.Redis(connection_pool=pool)
        _async_clients[loop_id] = client
    return client


def connection_kwargs(url: str) -> dict[str, Any]:
    """`url` as keyword arguments of redis.Redis (what django-eventstream's
    EVENTSTREAM_REDIS takes): host or socket, database, user, password, TLS."""
    found: dict[str, Any] = dict(parse_url(url))
    kind = found.pop("connection_class", None)
    if kind is not None and issubclass(kind, redis.SSLConnection):
        found["ssl"] = True
    if kind is not None and issubclass(kind, redis.UnixDomainSocketConnection):
        found["unix_socket_path"] = found.pop("path")
    return found
