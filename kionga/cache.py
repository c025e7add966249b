"""Django's Redis cache with one connection pool per process and server.

Django keeps a cache instance per context (asgiref Local), and the request/response
handler (kionga.wsgi_hop, kionga/asgi.py) runs each request in a fresh copy of the context,
so the stock backend built a new connection pool, and opened a new Redis connection,
for every request that touched the cache (every throttled API call). The pools here
are shared by every instance of the process: one TCP connection is reused instead.
The stock client also built a new redis.Redis (its ~200 response callbacks) for each
get and set, ~0.4 ms of CPU each; a client per pool is kept here too (they are
thread-safe: each command takes a connection from the pool).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from django.core.cache.backends.redis import RedisCache, RedisCacheClient

_pools: dict[tuple[int, str], Any] = {}
_clients: dict[int, Any] = {}
_lock = threading.Lock()


class SharedPoolClient(RedisCacheClient):
    def _get_connection_pool(self, write: bool) -> Any:
        me: Any = self  # django-stubs leave out the client's private attributes
        index = me._get_connection_pool_index(write)
        key = (os.getpid(), me._servers[index])  # a forked child makes its own
        pool = _pools.get(key)
        if pool is None:
            with _lock:
                pool = _pools.get(key)
                if pool is None:
                    pool = _pools[key] = me._pool_class.from_url(me._servers[index],
                                                                 **me._pool_options)
        return pool

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        pool = self._get_connection_pool(write)
        client = _clients.get(id(pool))
        if client is None:
            me: Any = self
            client = _clients.setdefault(id(pool), me._client(connection_pool=pool))
        return client


class SharedPoolRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = SharedPoolClient
