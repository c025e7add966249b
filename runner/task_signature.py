"""A run task's signature: an HMAC-SHA256 of its payload's canonical JSON, keyed with the
runner token, which only the gateway and the runner hold.

The gateway sends a payload as its canonical JSON text, signed as sent (runs/dispatch.py):
the runner checks the text as it came, without encoding the payload again, and Celery's
decoder (a Python hook per JSON object) sees one string instead of every object of the
graph. Pure Python (no Django): the gateway imports this module too.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any

from contracts.hashing import canonical_json


def sign(payload: dict[str, Any], token: str) -> str:
    """HMAC-SHA256 of the payload's canonical JSON, keyed with the runner token."""
    return sign_text(canonical_json(payload), token)


def sign_text(text: str, token: str) -> str:
    """sign() of the payload whose canonical JSON is `text`."""
    return hmac.new(token.encode("utf-8"), text.encode("utf-8"), hashlib.sha256).hexdigest()


def opened(payload: Any, signature: Any, token: str) -> dict[str, Any] | None:
    """The task's payload if `signature` is its signature, else None: a payload sent as
    text is checked as it came; one sent as an object (a Celery client's `send_task`
    with the dict) is checked over its canonical JSON."""
    if not isinstance(signature, str):
        return None
    if isinstance(payload, str):
        if not hmac.compare_digest(sign_text(payload, token), signature):
            return None
        try:
            parsed = json.loads(payload)
        except ValueError:
            return None
        return parsed if isinstance(parsed, dict) else None
    if isinstance(payload, dict) and hmac.compare_digest(sign(payload, token), signature):
        return payload
    return None
