"""What the provider keeps in memory besides its database: whose email it has not
verified (one process serves every request and /control/, so a set is enough)."""

from __future__ import annotations

from typing import Any

UNVERIFIED: set[str] = set()


def email_verified(user: Any) -> bool:
    return str(user.username) not in UNVERIFIED
