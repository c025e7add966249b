"""One-time confirmation tokens of the MCP server's side-effect tools.

A side-effect tool called without `confirm` answers a preview and a token bound to that
exact call (the tool and its arguments). Only a call with the same arguments, `confirm:
true` and that token acts, once, within `TOKEN_SECONDS`: a client cannot act on a first
call, nor on a preview of something else."""

from __future__ import annotations

import hashlib
import json
import secrets
import threading
import time
from collections.abc import Callable
from typing import Any

from kionga_client.errors import KiongaError

TOKEN_SECONDS = 600  # time for the person to read the preview and agree
MAX_PENDING = 256  # previews not yet confirmed; past it the oldest token lapses
CONFIRM_FIELD, TOKEN_FIELD = "confirm", "confirmation_token"


def call_digest(name: str, arguments: dict[str, Any]) -> str:
    """The tool call a token confirms: its name and arguments but the confirmation's."""
    call = {k: v for k, v in arguments.items() if k not in (CONFIRM_FIELD, TOKEN_FIELD)}
    text = json.dumps([name, call], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class Confirmations:
    """The tokens this server handed out with previews and not yet used."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.lock = threading.Lock()  # tool calls run on worker threads
        self.pending: dict[str, tuple[str, float]] = {}  # token: (call digest, expiry)

    def issue(self, name: str, arguments: dict[str, Any]) -> str:
        token = secrets.token_urlsafe(24)
        with self.lock:
            now = self.clock()
            # Lapsed tokens are kept one more period, to be refused as expired.
            self.pending = {t: v for t, v in self.pending.items()
                            if v[1] + TOKEN_SECONDS > now}
            while len(self.pending) >= MAX_PENDING:
                del self.pending[next(iter(self.pending))]
            self.pending[token] = (call_digest(name, arguments), now + TOKEN_SECONDS)
        return token

    def redeem(self, name: str, arguments: dict[str, Any]) -> None:
        """Use up the token of this confirmed call, or refuse it saying why."""
        token = arguments.get(TOKEN_FIELD)
        if not isinstance(token, str) or not token:
            raise refused(name, "missing", f"confirm: true needs the {TOKEN_FIELD} of this "
                          "call's preview.")
        with self.lock:
            found = self.pending.pop(token, None)  # one use, whatever comes of it
        if found is None:
            raise refused(name, "unknown", f"This {TOKEN_FIELD} is unknown or was used "
                          "already (each confirms one call).")
        digest, expiry = found
        if self.clock() >= expiry:
            raise refused(name, "expired", f"This {TOKEN_FIELD} has expired (it confirms "
                          f"a call within {TOKEN_SECONDS} seconds of its preview).")
        if not secrets.compare_digest(digest, call_digest(name, arguments)):
            raise refused(name, "mismatch", f"This {TOKEN_FIELD} is of a preview of other "
                          "arguments (or another tool), not of this call; it is void now.")


def refused(name: str, reason: str, why: str) -> KiongaError:
    return KiongaError(
        "CONFIRMATION_REQUIRED", f"Not done: {why}",
        hint=f"Call {name} without confirm to get its preview and {TOKEN_FIELD}; show the "
             "preview to the person you act for, and once they agree call it again with "
             f"the same arguments, confirm: true and that {TOKEN_FIELD}.",
        details={"confirmation": reason})
