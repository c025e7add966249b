"""Bearer-token and session authentication of the public API (GET /api/v1/me)."""

from __future__ import annotations

from django.contrib.auth.models import User
from rest_framework.test import APIClient

from kionga.models import ApiToken
from tests.conftest import Api

ME = "/api/v1/me"


def test_it_rejects_a_request_without_token(api: Api, alice: User) -> None:
    response = api.anon().get(ME)
    api.assert_error(response, 401, "not_authenticated")
    assert response["WWW-Authenticate"].startswith("Bearer")


def test_it_rejects_an_unknown_token(api: Api, alice: User) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Bearer kio_" + "x" * 43)
    api.assert_error(client.get(ME), 401, "invalid_token")


def test_it_rejects_a_malformed_header(api: Api, alice: User) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {api.token_for(alice)} extra")
    api.assert_error(client.get(ME), 401, "invalid_token")


def test_it_rejects_a_revoked_token(api: Api, alice: User) -> None:
    client = api.client_for(alice)
    ApiToken.objects.filter(user=alice).update(revoked=True)
    api.assert_error(client.get(ME), 401, "invalid_token")


def test_it_rejects_the_token_of_a_deactivated_user(api: Api, alice: User) -> None:
    client = api.client_for(alice)
    User.objects.filter(pk=alice.pk).update(is_active=False)
    api.assert_error(client.get(ME), 401, "invalid_token")


def test_it_returns_me_with_my_projects_and_roles(api: Api, alice: User, bob: User) -> None:
    response = api.client_for(bob).get(ME)
    assert response.status_code == 200
    body = response.json()
    assert body["username"] == "bob"
    assert [(p["slug"], p["role"]) for p in body["projects"]] == [("acme", "viewer")]


def test_it_shows_no_other_tenant(api: Api, alice: User, mallory: User) -> None:
    body = api.client_for(mallory).get(ME).json()
    assert [p["slug"] for p in body["projects"]] == ["evil"]


def test_it_accepts_a_session(api: Api, alice: User) -> None:
    client = APIClient()
    client.force_login(alice)
    assert client.get(ME).status_code == 200


def test_it_records_last_use(api: Api, alice: User) -> None:
    api.client_for(alice).get(ME)
    assert ApiToken.objects.get(user=alice).last_used_at is not None


def test_it_stores_only_a_hash_of_the_token(api: Api, alice: User) -> None:
    raw = api.token_for(alice)
    stored = ApiToken.objects.get(user=alice)
    assert raw.startswith("kio_") and len(raw) >= 40
    assert stored.prefix == raw[:8]
    assert raw not in {stored.token_hash, stored.name, stored.prefix}
