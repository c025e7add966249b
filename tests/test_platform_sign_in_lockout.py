"""Failed sign-ins lock a user name only from the address that failed it, on every
sign-in page (admin, designer, approvals UI): wrong passwords for made-up names lock
nobody out, wrong passwords for alice lock alice from that address and not from another,
and an approver behind an address others failed from still signs in and decides."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from approvals.models import ApprovalRequest
from kionga.models import Project
from tests.approvals_helpers import pending, waiting_run
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


@pytest.fixture
def staff_alice(alice: User) -> User:
    alice.is_staff = True  # the admin's login page admits ops staff only
    alice.save(update_fields=["is_staff"])
    return alice


@pytest.mark.parametrize("page", SIGN_IN_PAGES)
def test_wrong_passwords_for_made_up_names_lock_nobody_out(page: str, staff_alice: User,
                                                           settings: Any) -> None:
    statuses = fail(page, SHARED, made_up_names(settings.AXES_FAILURE_LIMIT))
    assert statuses == [200] * settings.AXES_FAILURE_LIMIT
    assert sign_in(page, "alice", "alice-password", SHARED).status_code == 302


@pytest.mark.parametrize("page", SIGN_IN_PAGES)
def test_wrong_passwords_for_alice_lock_alice_from_that_address_only(
        page: str, staff_alice: User, settings: Any) -> None:
    limit = settings.AXES_FAILURE_LIMIT
    assert fail(page, SHARED, ["alice"] * limit) == [200] * (limit - 1) + [429]
    locked = sign_in(page, "alice", "alice-password", SHARED)
    assert locked.status_code == 429
    assert int(locked["Retry-After"]) == settings.AXES_COOLOFF_TIME.total_seconds()
    assert "for this user name" in locked.content.decode()
    # Every sign-in page shares the lock: it is alice's, from that address.
    for other in SIGN_IN_PAGES:
        assert sign_in(other, "alice", "alice-password", SHARED).status_code == 429
    assert sign_in(page, "alice", "alice-password", ELSEWHERE).status_code == 302


def test_an_approver_behind_an_address_others_failed_from_signs_in_and_decides(
        carol: User, bob: User, alice: User, acme: Project, settings: Any) -> None:
    settings.KIONGA_LOGIN_ADDRESS_FAILURES = 100  # the slowdown is the next file's business
    approval = pending(waiting_run(alice, acme))
    # Others, behind the same address: made-up names, and bob's name until it locks.
    fail("approvals", SHARED, made_up_names(settings.AXES_FAILURE_LIMIT))
    fail("approvals", SHARED, ["bob"] * settings.AXES_FAILURE_LIMIT)
    assert sign_in("approvals", "bob", "bob-password", SHARED).status_code == 429
    browser = Client()
    signed = sign_in("approvals", "carol", "carol-password", SHARED, browser)
    assert signed.status_code == 302 and signed["Location"] == "/approvals/"
    # Signed in, deciding is no sign-in: neither the locks nor the slowdown apply.
    decided = browser.post(f"/approvals/{approval.pk}/decision",
                           {"decision": "approve", "comment": "fine"}, REMOTE_ADDR=SHARED)
    assert decided.status_code == 302, decided.content[:300]
    approval.refresh_from_db()
    assert approval.status == ApprovalRequest.Status.APPROVED
