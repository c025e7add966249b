"""Resource secrets encrypted at rest: AES-256-GCM under keys kept outside the database.

``KIONGA_SECRET_KEYS`` lists keys (urlsafe base64 of 32 random bytes, comma-separated):
the first encrypts, any decrypts, so a new key goes first and the old ones stay until
``manage.py reencrypt_secrets`` has moved every value to the new one. A stored value is

    kx1.<key id>.<urlsafe base64 of nonce + ciphertext + tag>

The key id (a hash of the key, never the key) says which key to use. The associated
data binds a value to its row and column (``context``): a ciphertext copied into
another row or column does not decrypt. A value that does not decrypt raises
SecretKeyError with what to fix; it is never handed on as text.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

PREFIX = "kx1"
SETTING = "KIONGA_SECRET_KEYS"
KEY_BYTES = 32
NONCE_BYTES = 12


class SecretKeyError(ImproperlyConfigured):
    """A key is missing, malformed or wrong for a stored value."""


@dataclass(frozen=True)
class Keys:
    ids: tuple[str, ...]  # in the setting's order: ids[0] encrypts
    by_id: dict[str, AESGCM]


def new_key() -> str:
    """A fresh key in the setting's form."""
    return base64.urlsafe_b64encode(os.urandom(KEY_BYTES)).decode()


def key_id(raw: bytes) -> str:
    return hashlib.sha256(b"kionga-secret-key-id\0" + raw).hexdigest()[:12]


@lru_cache(maxsize=8)
def parse_keys(entries: tuple[str, ...]) -> Keys:
    """The keys of the setting's value; SecretKeyError names what is wrong."""
    ids: list[str] = []
    by_id: dict[str, AESGCM] = {}
    for number, entry in enumerate(entries, start=1):
        try:
            raw = base64.urlsafe_b64decode(entry.strip().encode("ascii"))
        except (binascii.Error, ValueError, UnicodeEncodeError):
            raw = b""
        if len(raw) != KEY_BYTES:
            raise SecretKeyError(
                f"{SETTING}: entry {number} is not urlsafe base64 of {KEY_BYTES} bytes "
                "(make one with: python -c 'import base64, os; "
                "print(base64.urlsafe_b64encode(os.urandom(32)).decode())').")
        kid = key_id(raw)
        if kid not in by_id:
            ids.append(kid)
            by_id[kid] = AESGCM(raw)
    if not ids:
        raise SecretKeyError(
            f"{SETTING} is not set: resource secrets are stored encrypted under it. Set it "
            "to a key (urlsafe base64 of 32 random bytes); bin/demo makes one in var/.")
    return Keys(tuple(ids), by_id)


def configured_keys() -> Keys:
    value = getattr(settings, SETTING, ())
    entries = (value,) if isinstance(value, str) else tuple(value)
    return parse_keys(tuple(e for e in entries if e.strip()))


def context(table: str, column: str, *row: object) -> bytes:
    """The associated data of one stored value: its table, column and row identity."""
    return "\0".join([table, column, *(str(part) for part in row)]).encode()


def is_sealed(stored: str) -> bool:
    return stored.startswith(PREFIX + ".")


def stored_key_id(stored: str) -> str:
    """The key id a stored value was encrypted under ('' when it is not one)."""
    parts = stored.split(".")
    return parts[1] if len(parts) == 3 and parts[0] == PREFIX else ""


def encrypt(plaintext: str, aad: bytes) -> str:
    keys = configured_keys()
    kid = keys.ids[0]
    nonce = os.urandom(NONCE_BYTES)
    sealed = keys.by_id[kid].encrypt(nonce, plaintext.encode(), aad)
    return f"{PREFIX}.{kid}.{base64.urlsafe_b64encode(nonce + sealed).decode()}"


def decrypt(stored: str, aad: bytes, where: str) -> str:
    """The plaintext of a stored value; `where` names it in the error (never its value)."""
    kid = stored_key_id(stored)
    if not kid:
        raise SecretKeyError(f"The stored secret of {where} is not encrypted: run "
                             "`manage.py migrate` (it encrypts existing secrets).")
    aead = configured_keys().by_id.get(kid)
    if aead is None:
        raise SecretKeyError(
            f"The secret of {where} is encrypted under key id {kid}, which is not in "
            f"{SETTING}: the key configured is wrong or the old key was removed too early.")
    try:
        blob = base64.urlsafe_b64decode(stored.split(".")[2].encode("ascii"))
        return aead.decrypt(blob[:NONCE_BYTES], blob[NONCE_BYTES:], aad).decode()
    except (InvalidTag, binascii.Error, ValueError):
        raise SecretKeyError(f"The secret of {where} does not decrypt under key id {kid}: "
                             "it was altered or copied from another row.") from None
