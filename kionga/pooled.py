"""Database work asked from the event loop (event streams): in one of
a few reused threads, each handing its connection back to the pool (kionga.settings)
after every call. A stream lives for minutes and must not hold a connection meanwhile;
a new thread per call cost more than the work of an opening. An error that says
the database is away comes out as kionga.database.DatabaseUnavailable (503), which
an opening answers and event streams end on; a broken connection goes back to
the pool, which drops it.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Final, ParamSpec, TypeVar

from django.db import connection

from kionga import database

P = ParamSpec("P")
T = TypeVar("T")

_THREADS: Final = ThreadPoolExecutor(max_workers=8, thread_name_prefix="runs-db")


def pooled(fn: Callable[P, T]) -> Callable[P, Awaitable[T]]:
    """`fn` as a coroutine function that runs it in one of the threads."""

    async def call(*args: P.args, **kwargs: P.kwargs) -> T:
        loop = asyncio.get_running_loop()
        # In the caller's context (its context variables), as asgiref's sync_to_async.
        work: Callable[[], T] = partial(_closing, fn, *args, **kwargs)
        return await loop.run_in_executor(_THREADS, contextvars.copy_context().run, work)

    return call


def _closing(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    try:
        return fn(*args, **kwargs)
    except Exception as exc:
        unavailable = database.unavailable(exc)
        if unavailable is None:
            raise
        raise unavailable from exc
    finally:
        connection.close()
