"""Each run's event key: authenticates the run's event entries, in the ingest stream
and in its live stream (runner/protocol.py).

Derived from the gateway's own secret (DJANGO_SECRET_KEY), never stored: the
gateway hands it to the runner inside the signed, sealed task and derives it again
to check an entry. A runner holds only the keys of the runs it was given; anything
else that can write to Redis holds none, so it cannot have an event stored.
Keys made with a secret in DJANGO_SECRET_KEY_FALLBACKS still verify, so rotating
the secret does not reject the events of runs already under way.
"""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.utils.crypto import salted_hmac

from runner import protocol

_SALT = "kionga.runs.event_key"


def event_key(run_id: str) -> bytes:
    return _derive(run_id, settings.SECRET_KEY)


def entry_authentic(run_id: str, encoded: bytes, mac: bytes) -> bool:
    for secret in (settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS):
        if protocol.event_mac_valid(_derive(run_id, str(secret)), run_id, encoded, mac):
            return True
    return False


def record_authentic(run_id: str, encoded: bytes, mac: bytes) -> bool:
    """A node record entry's MAC (runner/protocol.py record_fields) under the run's key."""
    for secret in (settings.SECRET_KEY, *settings.SECRET_KEY_FALLBACKS):
        if protocol.record_mac_valid(_derive(run_id, str(secret)), run_id, encoded, mac):
            return True
    return False


def ingest_fields(run_id: str, encoded: bytes) -> dict[Any, Any]:
    """An ingest entry for an event the gateway writes itself (cancel before pickup)."""
    return protocol.ingest_fields(event_key(run_id), run_id, encoded)


def live_fields(run_id: str, encoded: bytes, *, stored_only: bool = False) -> dict[Any, Any]:
    """A live stream entry for an event the gateway writes itself."""
    return protocol.live_fields(event_key(run_id), run_id, encoded, stored_only=stored_only)


@functools.lru_cache(maxsize=4096)  # a run's events arrive together: derive once per run
def _derive(run_id: str, secret: str) -> bytes:
    return salted_hmac(_SALT, run_id, secret=secret, algorithm="sha256").digest()
