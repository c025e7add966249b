"""Seal the secrets of a run task (credential, event key) for the runner's eyes only.

A task waits in the Redis queue, where every broker consumer could read it; the
signature only proves it came from the gateway. So its secrets travel sealed with
a key derived from the runner token, which only the gateway and the runner hold:
a Redis reader without the token learns nothing of them, and the runner's Redis
ACL user (docker/redis-users.acl) is the only other one allowed to read the queue.

AES-256-GCM (the `cryptography` package) with a key derived from the token by HKDF;
the run ID is the associated data, so a sealed value only opens for its own task.
"""

from __future__ import annotations

import base64
import binascii
import json
import secrets
from functools import lru_cache
from typing import Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

NONCE_BYTES: Final = 12
TAG_BYTES: Final = 16
_INFO: Final = b"kionga/task-seal/v2"


class SealError(ValueError):
    """A sealed value is malformed, was made with another token, or was altered."""


def seal(values: dict[str, str], token: str, context: str) -> str:
    nonce = secrets.token_bytes(NONCE_BYTES)
    plain = json.dumps(values, separators=(",", ":")).encode("utf-8")
    cipher = _aead(token).encrypt(nonce, plain, context.encode("utf-8"))
    return base64.urlsafe_b64encode(nonce + cipher).decode("ascii")


def unseal(sealed: str, token: str, context: str) -> dict[str, str]:
    try:
        raw = base64.urlsafe_b64decode(sealed.encode("ascii"))
    except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
        raise SealError("the sealed value is not base64") from exc
    if len(raw) < NONCE_BYTES + TAG_BYTES:
        raise SealError("the sealed value is too short")
    try:
        plain = _aead(token).decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:],
                                     context.encode("utf-8"))
    except InvalidTag:
        raise SealError("the sealed value does not match this token and run") from None
    values = json.loads(plain)
    if not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values()):
        raise SealError("the sealed value is not a map of strings")
    return values


@lru_cache(maxsize=4)
def _aead(token: str) -> AESGCM:
    """The token's AEAD, derived once per token and process: HKDF and the cipher's
    set-up cost more than sealing or opening one task's few secrets."""
    key = HKDF(algorithm=hashes.SHA256(), length=32, salt=None,
               info=_INFO).derive(token.encode("utf-8"))
    return AESGCM(key)
