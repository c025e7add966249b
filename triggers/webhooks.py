"""Webhook deliveries: signed with the trigger's secret, within a replay window, once
per delivery ID (docs/decisions/webhook-signatures.md).

A delivery is `POST /api/v1/hooks/{trigger_id}` with the raw body (the turn's input,
UTF-8 text up to MAX_BODY_BYTES) and two headers:

    Kionga-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + body)>
    Kionga-Delivery: <the sender's ID of this delivery>

Checks in this order, each with its stable code: an unknown trigger 404 `not_found`;
a missing or wrong signature 401 `invalid_signature`; a timestamp further than
REPLAY_WINDOW_SECONDS from now 401 `signature_expired`; no delivery ID 400
`invalid_request`; a delivery ID seen before 200 with the first answer (nothing
starts); a disabled trigger 409 `trigger_disabled`; a body over the bound 413; else the
turn is opened (triggers.firings) and the answer is 202.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
import uuid
from dataclasses import dataclass
from typing import Final

from kionga.errors import APIError, ErrorCode, invalid_field, not_found
from runs.serializers import MAX_INPUT_CHARS
from triggers.firings import do_fire
from triggers.models import Firing, Trigger

SIGNATURE_HEADER: Final = "Kionga-Signature"
DELIVERY_HEADER: Final = "Kionga-Delivery"
SCHEME: Final = "v1"
# Deliveries signed longer ago (or further ahead) than this are refused: a captured
# delivery cannot be replayed later. Five minutes, as Stripe's default tolerance.
REPLAY_WINDOW_SECONDS: Final = 300
# The body is the turn's input: at most as long as a run's input.
MAX_BODY_BYTES: Final = MAX_INPUT_CHARS
MAX_DELIVERY_ID: Final = 200
SECRET_PREFIX: Final = "whsec_"
INVALID_SIGNATURE: Final[ErrorCode] = "invalid_signature"
SIGNATURE_EXPIRED: Final[ErrorCode] = "signature_expired"
TRIGGER_DISABLED: Final[ErrorCode] = "trigger_disabled"
_DELIVERY_ID = re.compile(rf"[\x21-\x7e]{{1,{MAX_DELIVERY_ID}}}")


def new_secret() -> str:
    """A webhook's signing secret: the prefix and 256 random bits."""
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def sign(secret: str, timestamp: int, body: bytes) -> str:
    """The Kionga-Signature header value of `body` sent at `timestamp` (for senders and
    tests: the one definition of the scheme)."""
    digest = hmac.new(secret.encode("utf-8"), f"{timestamp}.".encode() + body,
                      hashlib.sha256).hexdigest()
    return f"t={timestamp},{SCHEME}={digest}"


def _unauthorized(code: ErrorCode, message: str) -> APIError:
    error = APIError(401, code, message)
    error.auth_header = f'{SIGNATURE_HEADER} realm="webhook"'  # type: ignore[attr-defined]
    return error


def check_signature(secret: str, header: str, body: bytes, now: float | None = None) -> None:
    """Nothing when `header` signs `body` with `secret` within the replay window; else
    401 invalid_signature or signature_expired."""
    parts: dict[str, list[str]] = {}
    for item in header.split(","):
        name, _, value = item.strip().partition("=")
        parts.setdefault(name, []).append(value)
    stamp = parts.get("t", [""])[0]
    if len(parts.get("t", [])) != 1 or not stamp.isdigit() or len(stamp) > 12 \
            or not parts.get(SCHEME):
        raise _unauthorized(INVALID_SIGNATURE, f"Send '{SIGNATURE_HEADER}: t=<unix seconds>,"
                            f"{SCHEME}=<hex HMAC-SHA256 of \"<t>.<body>\">'.")
    expected = sign(secret, int(stamp), body).rpartition("=")[2]
    if not any(hmac.compare_digest(expected, given) for given in parts[SCHEME]):
        raise _unauthorized(INVALID_SIGNATURE, "The signature does not match the body and "
                                               "this trigger's secret.")
    if abs((time.time() if now is None else now) - int(stamp)) > REPLAY_WINDOW_SECONDS:
        raise _unauthorized(SIGNATURE_EXPIRED, f"The signature's timestamp is more than "
                            f"{REPLAY_WINDOW_SECONDS} seconds from now; sign the delivery "
                            "again when sending it.")


@dataclass(frozen=True)
class Delivery:
    signature: str
    delivery_id: str
    body: bytes


def check_webhook(trigger_id: object) -> Trigger:
    """A webhook trigger, or 404 (unknown, malformed ID, a schedule)."""
    try:
        pk = uuid.UUID(str(trigger_id))
    except ValueError:
        raise not_found("No such webhook.") from None
    trigger = (Trigger.objects.select_related("agent__version", "agent__project")
               .filter(pk=pk, kind=Trigger.Kind.WEBHOOK).first())
    if trigger is None:
        raise not_found("No such webhook.")
    return trigger


def do_receive(trigger: Trigger, delivery: Delivery) -> tuple[Firing, bool]:
    """The delivery's firing and whether it is new (False: a repeat; nothing started)."""
    check_signature(trigger.secret, delivery.signature, delivery.body)
    if not _DELIVERY_ID.fullmatch(delivery.delivery_id):
        raise invalid_field(DELIVERY_HEADER, f"Send your ID of this delivery: 1 to "
                                             f"{MAX_DELIVERY_ID} printable ASCII characters.")
    first = Firing.objects.filter(trigger=trigger, delivery_id=delivery.delivery_id).first()
    if first is not None:
        return first, False
    if not trigger.enabled:
        raise APIError(409, TRIGGER_DISABLED, "This webhook is disabled; an editor of the "
                                              "agent can enable it.")
    if len(delivery.body) > MAX_BODY_BYTES:
        raise APIError(413, "payload_too_large",
                       f"A delivery's body is at most {MAX_BODY_BYTES} bytes.")
    try:
        text = delivery.body.decode("utf-8")
    except UnicodeDecodeError:
        raise invalid_field("body", "The body is not UTF-8 text.") from None
    return do_fire(trigger, delivery.delivery_id, text)
