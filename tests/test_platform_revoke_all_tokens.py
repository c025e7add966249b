"""Ops staff end every API token of a person in one action (the admin's user list:
"Revoke every API token of the selected people"), e.g. someone removed at the identity
provider: the tokens, and the ones made from them, stop working at once; other people's
keep working; it is audited once per person."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client

from kionga.models import ApiToken, AuditEvent
from kionga.tokens import issue_token
from tests.conftest import Api

CHANGELIST = "/admin/auth/user/"


def test_one_action_ends_every_token_of_the_person(staff: Client, api: Api, alice: User,
                                                   bob: User) -> None:
    alices = [issue_token(alice, "laptop"), issue_token(alice, "ci")]
    child = api.client_for(None)
    child.credentials(HTTP_AUTHORIZATION=f"Bearer {alices[0]}")
    made = child.post("/api/v1/me/tokens", {"name": "child"}).json()["token"]
    bobs = issue_token(bob, "laptop")
    for raw in [*alices, made, bobs]:
        assert _me(raw) == 200

    page = staff.post(CHANGELIST, {"action": "revoke_all_tokens",
                                   "_selected_action": [alice.pk]}, follow=True)
    assert "Revoked 3 token(s) of 1 person(s)." in page.content.decode()
    assert [_me(raw) for raw in [*alices, made]] == [401, 401, 401]
    assert _me(bobs) == 200
    assert not ApiToken.objects.filter(user=alice, revoked=False).exists()
    event = AuditEvent.objects.get(action="token.revoked_all")
    assert event.actor is not None and event.actor.get_username() == "ops"
    assert event.target_id == str(alice.pk) and event.details == {"username": "alice",
                                                                  "tokens": 3}


def test_the_users_page_offers_the_action(staff: Client) -> None:
    assert "Revoke every API token of the selected people" in \
        staff.get(CHANGELIST).content.decode()


def _me(raw: str) -> int:
    return Client().get("/api/v1/me", HTTP_AUTHORIZATION=f"Bearer {raw}").status_code
