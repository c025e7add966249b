"""The usual body of a run start, recognised without DRF: or None, and Django's
serializer (runs.serializers.StartRunSerializer) answers it, errors included.

Only bodies that serializer surely accepts as they are qualify: a JSON object with
`input` (a string within MAX_INPUT_CHARS), `allow_side_effects` (a boolean),
`stop_after` (a string or null), `revision` (an integer from 1 to MAX_REVISION, or null), and
`session_id` / `history` only when empty (a session brings stored turns: the DRF
path reads them).
"""

from __future__ import annotations

from kionga.parsers import loads
from runs.serializers import MAX_INPUT_CHARS
from runs.start import StartRequest

# Revision numbers are PostgreSQL integers; a larger one is left to Django's path.
MAX_REVISION = 2**31 - 1


def parse(raw: bytes) -> StartRequest | None:
    try:
        body = loads(raw)  # the API's one strict JSON loader (kionga.parsers)
    except ValueError:
        return None
    if not isinstance(body, dict) or not set(body) <= _FIELDS:
        return None
    text, side_effects = body.get("input", ""), body.get("allow_side_effects", False)
    stop_after, revision = body.get("stop_after"), body.get("revision")
    if not (type(text) is str and len(text) <= MAX_INPUT_CHARS
            and type(side_effects) is bool
            and (stop_after is None or type(stop_after) is str)
            and (revision is None or (type(revision) is int and 1 <= revision <= MAX_REVISION))
            and body.get("session_id") in (None, "") and body.get("history") is None):
        return None
    if not all(_storable(s) for s in (text, stop_after or "")):
        return None
    return StartRequest(text, None, None, side_effects, stop_after or None, revision)


_FIELDS = frozenset({"input", "session_id", "history", "allow_side_effects", "stop_after",
                     "revision"})


def _storable(text: str) -> bool:
    """What DRF's CharField accepts: no NUL character, no unpaired surrogate."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return "\x00" not in text
