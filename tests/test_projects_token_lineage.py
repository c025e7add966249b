"""For any sequence of token creations (by a signed-in person or by a token) and
revocations (everywhere, or for one project), in any order: a token is revoked exactly
when it or a token it was made from was, and it expires no later than its parent."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rest_framework.exceptions import APIException

from kionga.models import ApiToken, Project, TokenRevocation
from kionga.projects import token_actions

pytestmark = pytest.mark.django_db

# ("make", parent, hours): a new token, by the signed-in person (parent None) or by
# the token numbered `parent` (modulo how many there are), expiring in `hours` (None:
# as long as allowed); ("revoke", n) everywhere, ("project", n) for acme only.
MAKE = st.tuples(st.just("make"), st.one_of(st.none(), st.integers(0, 11)),
                 st.one_of(st.none(), st.integers(1, 48)))
REVOKE = st.tuples(st.sampled_from(["revoke", "project"]), st.integers(0, 11))
STEPS = st.lists(st.one_of(MAKE, MAKE, REVOKE), min_size=1, max_size=12)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=STEPS)
def test_revoking_a_token_revokes_every_token_made_from_it(
        carol: User, alice: User, acme: Project, steps: list[tuple[Any, ...]]) -> None:
    ApiToken.objects.filter(user=carol).delete()
    now = timezone.now()
    made: list[ApiToken] = []
    parent_of: dict[int, int | None] = {}
    revoked: set[int] = set()
    revoked_here: set[int] = set()

    def covered(token_id: int, marks: set[int]) -> bool:
        """Whether the token or one it was made from (at any depth) is in marks."""
        at: int | None = token_id
        while at is not None:
            if at in marks:
                return True
            at = parent_of[at]
        return False

    for kind, number, *hours in steps:
        if kind == "make":
            parent = made[number % len(made)] if number is not None and made else None
            wanted = None if hours[0] is None else now + timedelta(hours=hours[0])
            try:
                answer = token_actions.do_create_token(carol, parent, "t", wanted)
            except APIException:
                # Refused only when the parent is dead or would be outlived.
                assert parent is not None
                bound = parent.expires_at
                assert covered(parent.pk, revoked) or (
                    wanted is not None and bound is not None and wanted > bound)
                continue
            token = ApiToken.objects.get(pk=answer["id"])
            made.append(token)
            parent_of[token.pk] = None if parent is None else parent.pk
        elif made:
            target = made[number % len(made)]
            if kind == "revoke":
                token_actions.do_revoke_token(carol, target)
                revoked.add(target.pk)
            else:
                token_actions.do_revoke_for_project(alice, acme, target)
                revoked_here.add(target.pk)

    stored = {t.pk: t for t in ApiToken.objects.filter(user=carol)}
    in_project = set(TokenRevocation.objects.filter(project=acme)
                     .values_list("token_id", flat=True))
    for token_id, parent_id in parent_of.items():
        token = stored[token_id]
        assert token.parent_id == parent_id
        assert token.revoked == covered(token_id, revoked)
        assert (token_id in in_project) == covered(token_id, revoked_here)
        if parent_id is not None and stored[parent_id].expires_at is not None:
            assert token.expires_at is not None
            assert token.expires_at <= stored[parent_id].expires_at  # type: ignore[operator]
