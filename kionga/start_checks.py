"""What a listener checks before it serves: uvicorn's lifespan start-up (`--lifespan on`
in every shipped command).

The stored resource secrets must be under keys KIONGA_SECRET_KEYS lists: a listener
started with a wrong (but well-formed) key stops with the key id to restore, instead
of starting and answering 503 on every call that needs a secret. A missing or
malformed key already stops it at import (kionga.secret_box). A database that is away
at start-up says nothing here: the listener starts and answers 503 until it is back.
Done at start-up rather than at import, so importing a listener's module (tests do)
never reads the database.

Once the checks pass, what start-up made (Django, the URLconf and every view's module)
is moved out of the cyclic collector's sight (runner.heap.freeze): it lives as long as
the process, and a full collection under load walks only what requests made.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.db import connections
from django.urls import get_resolver

from kionga import secret_box
from kionga.secret_storage import unknown_key_problems
from runner import heap


def check_stored_keys() -> None:
    """SecretKeyError naming every column and key id no configured key opens."""
    try:
        problems = unknown_key_problems()
    finally:
        connections.close_all()  # this start-up thread's own connection
    if problems:
        raise secret_box.SecretKeyError(" ".join(problems))


def freeze_start_up() -> None:
    """Everything imported and made so far lives as long as the process: moved out of
    the collector's sight (see the module's docstring)."""
    get_resolver().url_patterns  # noqa: B018  (imports every view's module)
    heap.freeze()


async def lifespan(scope: dict[str, Any], receive: Any, send: Any, *,
                   spaced: bool = False) -> None:
    """The ASGI lifespan protocol: start-up fails (uvicorn exits) when a check does.
    `spaced`: full collections spaced out too (runner.heap.space_full_collections), for
    a listener whose requests leave nothing in reference cycles."""
    await receive()  # lifespan.startup
    try:
        await sync_to_async(check_stored_keys, thread_sensitive=False)()
    except secret_box.SecretKeyError as exc:
        await send({"type": "lifespan.startup.failed", "message": f"SecretKeyError: {exc}"})
        return
    freeze_start_up()
    if spaced:
        heap.space_full_collections()
    await send({"type": "lifespan.startup.complete"})
    await receive()  # lifespan.shutdown
    await send({"type": "lifespan.shutdown.complete"})
