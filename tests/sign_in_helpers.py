"""Signing in on every sign-in page from a chosen address, and clean failure counters.

The pages are Django's LoginView (admin, designer, approvals UI); a sign-in that works
answers 302, a wrong password 200 (the form again), a refused one 429 (kionga.sign_in).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from kionga.sign_in import forget_failures

# Every sign-in page, by the app that serves it.
SIGN_IN_PAGES = {
    "admin": "/admin/login/?next=/admin/",
    "designer": "/designer/login/",
    "approvals": "/approvals/sign-in/",
}

# Documentation addresses (RFC 5737): none of them is anything's real address.
SHARED = "192.0.2.10"
ELSEWHERE = "192.0.2.20"
ADDRESSES = (SHARED, ELSEWHERE, "192.0.2.30", "192.0.2.40")


def sign_in(page: str, username: str, password: str, address: str,
            client: Client | None = None) -> Any:
    """POST the sign-in form of `page` (a SIGN_IN_PAGES key) as from `address`."""
    return (client or Client()).post(SIGN_IN_PAGES[page],
                                     {"username": username, "password": password},
                                     REMOTE_ADDR=address)


def fail(page: str, address: str, names: list[str]) -> list[int]:
    """One wrong password for each of `names` from `address`; their statuses."""
    return [sign_in(page, name, "wrong-password", address).status_code for name in names]


def made_up_names(count: int) -> list[str]:
    return [f"nobody{index}" for index in range(count)]


@pytest.fixture
def clean_addresses() -> Iterator[None]:
    """The failures counted for ADDRESSES (Redis outlives a test's database) forgotten,
    before and after the test."""
    for address in ADDRESSES:
        forget_failures(address)
    yield
    for address in ADDRESSES:
        forget_failures(address)
