"""Seal the secrets of a run task (credential, event key) for the runner's eyes only.

A task waits in the Redis queue, where every broker consumer could read it; the
signature only proves it came from the gateway. So its secrets travel sealed with
a key derived from the runner token, which only the gateway and the runner hold:
a Redis reader without the token learns nothing of them, and the runner's Redis
ACL user (docker/redis-users.acl) is the only other one allowed to read the queue.

Construction (no `cryptography` package in this project; the standard library's
HMAC-SHA256 as the pseudo-random function): encryption and authentication keys are
HMAC(token, label); the keystream is HMAC(enc key, nonce || counter) blocks
XORed with the plaintext (counter mode); the tag is HMAC(auth key, context ||
nonce || ciphertext), checked in constant time before anything is decrypted. The
context (the run ID) binds a sealed value to its task. A fresh 128-bit nonce per
seal means a keystream is never reused.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from typing import Final

NONCE_BYTES: Final = 16
TAG_BYTES: Final = 32
_BLOCK: Final = 32  # SHA-256 output


class SealError(ValueError):
    """A sealed value is malformed, was made with another token, or was altered."""


def seal(values: dict[str, str], token: str, context: str) -> str:
    enc_key, auth_key = _keys(token)
    nonce = secrets.token_bytes(NONCE_BYTES)
    plain = json.dumps(values, separators=(",", ":")).encode("utf-8")
    cipher = _xor(plain, _keystream(enc_key, nonce, len(plain)))
    tag = _tag(auth_key, context, nonce, cipher)
    return base64.urlsafe_b64encode(nonce + cipher + tag).decode("ascii")


def unseal(sealed: str, token: str, context: str) -> dict[str, str]:
    try:
        raw = base64.urlsafe_b64decode(sealed.encode("ascii"))
    except (binascii.Error, UnicodeEncodeError, ValueError) as exc:
        raise SealError("the sealed value is not base64") from exc
    if len(raw) < NONCE_BYTES + TAG_BYTES:
        raise SealError("the sealed value is too short")
    nonce, cipher, tag = raw[:NONCE_BYTES], raw[NONCE_BYTES:-TAG_BYTES], raw[-TAG_BYTES:]
    enc_key, auth_key = _keys(token)
    if not hmac.compare_digest(_tag(auth_key, context, nonce, cipher), tag):
        raise SealError("the sealed value does not match this token and run")
    values = json.loads(_xor(cipher, _keystream(enc_key, nonce, len(cipher))))
    if not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values()):
        raise SealError("the sealed value is not a map of strings")
    return values


def _keys(token: str) -> tuple[bytes, bytes]:
    secret = token.encode("utf-8")
    return (hmac.new(secret, b"kionga/task-seal/v1/encrypt", hashlib.sha256).digest(),
            hmac.new(secret, b"kionga/task-seal/v1/authenticate", hashlib.sha256).digest())


def _keystream(key: bytes, nonce: bytes, length: int) -> bytes:
    blocks = (length + _BLOCK - 1) // _BLOCK
    return b"".join(hmac.new(key, nonce + i.to_bytes(8, "big"), hashlib.sha256).digest()
                    for i in range(blocks))[:length]


def _xor(data: bytes, stream: bytes) -> bytes:
    return (int.from_bytes(data, "big") ^ int.from_bytes(stream, "big")).to_bytes(len(data), "big")


def _tag(key: bytes, context: str, nonce: bytes, cipher: bytes) -> bytes:
    return hmac.new(key, context.encode("utf-8") + b"\n" + nonce + cipher, hashlib.sha256).digest()
