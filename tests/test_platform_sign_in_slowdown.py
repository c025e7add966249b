"""Many failed sign-ins from one address, whatever the names, slow its sign-ins down
(kionga.sign_in): past KIONGA_LOGIN_ADDRESS_FAILURES they pass one at a time, the gate
closing 1 s, 2 s, ... never longer than KIONGA_LOGIN_SLOWDOWN_MAX_SECONDS; an attempt at
a closed gate is 429 with Retry-After, on every sign-in page, and is neither checked nor
counted; a correct sign-in passes once the gate opens; of attempts arriving together
only one passes; a browser that signed in as that name before passes at once; without
Redis there is no slowdown."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from redis.exceptions import ConnectionError as RedisConnectionError

from kionga import sign_in as guard
from tests.sign_in_helpers import (
    ELSEWHERE,
    SHARED,
    SIGN_IN_PAGES,
    clean_addresses,  # noqa: F401 (fixture)
    fail,
    made_up_names,
    sign_in,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("clean_addresses"),
              pytest.mark.allow_output]  # django-axes logs failures and lockouts

THRESHOLD, LONGEST = 3, 2


@pytest.fixture(autouse=True)
def slowdown(settings: Any) -> None:
    settings.KIONGA_LOGIN_ADDRESS_FAILURES = THRESHOLD
    settings.KIONGA_LOGIN_SLOWDOWN_MAX_SECONDS = LONGEST
    # A real hasher takes a second a password here: the gate's first second would pass
    # before the next attempt arrives. (Autouse: alice's password is hashed after this.)
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def wait_for_the_gate(response: Any) -> None:
    time.sleep(int(response["Retry-After"]) + 0.05)


def close_the_gate_for_a_minute(settings: Any, page: str = "approvals") -> None:
    """A long attack's state: the wait at a one-minute ceiling, and one more failure
    that just took the turn, so the checks after it need not race a one-second gate."""
    settings.KIONGA_LOGIN_SLOWDOWN_MAX_SECONDS = 60
    for _ in range(THRESHOLD + 10):
        guard.record_failure(SHARED)
    assert fail(page, SHARED, ["one-more"]) == [200]


def test_it_slows_an_address_down_past_its_failures_then_lets_alice_in(alice: User) -> None:
    assert fail("approvals", SHARED, made_up_names(THRESHOLD)) == [200] * THRESHOLD
    # Past the threshold, one attempt passes (and fails) and closes the gate for 1 s.
    assert fail("approvals", SHARED, ["nobody-else"]) == [200]
    refused = sign_in("approvals", "alice", "alice-password", SHARED)
    assert refused.status_code == 429 and refused["Retry-After"] == "1"
    assert "from your network" in refused.content.decode()
    wait_for_the_gate(refused)
    assert sign_in("approvals", "alice", "alice-password", SHARED).status_code == 302


def test_a_closed_gate_refuses_every_sign_in_page_and_counts_nothing(alice: User,
                                                                     settings: Any) -> None:
    close_the_gate_for_a_minute(settings)
    for page in SIGN_IN_PAGES:
        for _ in range(settings.AXES_FAILURE_LIMIT):
            refused = sign_in(page, "alice", "wrong-password", SHARED)
            assert refused.status_code == 429, page
            assert 0 < int(refused["Retry-After"]) <= 60
    # Not checked, so not failures: nothing stands against alice's name.
    assert not AccessAttempt.objects.filter(username="alice").exists()
    # Other addresses are not slowed.
    assert sign_in("designer", "alice", "alice-password", ELSEWHERE).status_code == 302


def test_the_wait_grows_and_never_passes_its_ceiling(alice: User) -> None:
    fail("approvals", SHARED, made_up_names(THRESHOLD))
    waits = []
    for attempt in range(3):  # the gate closes for 1 s, then 2 s, then 2 s (the ceiling)
        assert fail("approvals", SHARED, [f"guess{attempt}"]) == [200]
        refused = sign_in("approvals", "alice", "alice-password", SHARED)
        waits.append(int(refused["Retry-After"]))
        wait_for_the_gate(refused)
    assert waits == [1, 2, LONGEST]
    # However long the attack went on, the wait stays at the ceiling.
    for _ in range(500):
        guard.record_failure(SHARED)
    assert fail("approvals", SHARED, ["one-more"]) == [200]
    refused = sign_in("approvals", "alice", "alice-password", SHARED)
    assert refused.status_code == 429 and int(refused["Retry-After"]) == LONGEST
    wait_for_the_gate(refused)
    assert sign_in("approvals", "alice", "alice-password", SHARED).status_code == 302


@pytest.mark.django_db(transaction=True)  # the attempts run in threads of their own
def test_of_attempts_arriving_together_only_one_passes(alice: User, settings: Any) -> None:
    # The gate at a one-minute ceiling, and open: the first attempt takes it.
    settings.KIONGA_LOGIN_SLOWDOWN_MAX_SECONDS = 60
    for _ in range(THRESHOLD + 10):
        guard.record_failure(SHARED)

    def attempt(_: int) -> int:
        try:
            return int(sign_in("designer", "alice", "alice-password", SHARED).status_code)
        finally:
            connection.close()  # each thread's own connection

    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(attempt, range(8)))
    assert sorted(statuses) == [302] + [429] * 7


def test_a_browser_that_signed_in_as_a_name_before_passes_the_gate(
        alice: User, bob: User, settings: Any) -> None:
    alices_browser = Client()
    assert sign_in("approvals", "alice", "alice-password", SHARED,
                   alices_browser).status_code == 302
    alices_browser.post("/approvals/sign-out")
    close_the_gate_for_a_minute(settings)
    assert sign_in("approvals", "alice", "alice-password", SHARED).status_code == 429
    # The cookie is alice's: not bob's, and not a copy with another value.
    assert sign_in("approvals", "bob", "bob-password", SHARED,
                   alices_browser).status_code == 429
    forged = Client()
    forged.cookies[guard.TRUSTED_BROWSER_COOKIE] = "alice:forged"
    assert sign_in("approvals", "alice", "alice-password", SHARED, forged).status_code == 429
    assert sign_in("approvals", "alice", "alice-password", SHARED,
                   alices_browser).status_code == 302


def test_the_trusted_browser_cookie_is_http_only_and_lax(alice: User, settings: Any) -> None:
    settings.SESSION_COOKIE_SECURE = True
    failed = sign_in("approvals", "alice", "wrong-password", ELSEWHERE)
    assert guard.TRUSTED_BROWSER_COOKIE not in failed.cookies
    signed = sign_in("approvals", "alice", "alice-password", ELSEWHERE)
    cookie = signed.cookies[guard.TRUSTED_BROWSER_COOKIE]
    assert cookie["httponly"] and cookie["secure"] and cookie["samesite"] == "Lax"
    assert int(cookie["max-age"]) == guard.TRUSTED_BROWSER_DAYS * 24 * 3600
    assert "alice" not in cookie.value  # signed, not encrypted: it names her by a hash


def test_without_redis_there_is_no_slowdown(alice: User, monkeypatch: Any,
                                            caplog: pytest.LogCaptureFixture) -> None:
    class Down:
        def eval(self, *args: Any) -> Any:
            raise RedisConnectionError("down")

        def pipeline(self, *args: Any, **kwargs: Any) -> Any:
            raise RedisConnectionError("down")

    with monkeypatch.context() as patched:
        patched.setattr(guard, "sync_redis", Down)
        statuses = fail("approvals", SHARED, made_up_names(THRESHOLD + 3))
        assert statuses == [200] * (THRESHOLD + 3)
        assert sign_in("approvals", "alice", "alice-password", SHARED).status_code == 302
    assert "sign-in failure counters unavailable" in caplog.text
