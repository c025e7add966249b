"""Signing in through the company's OpenID Connect provider (a real one on loopback,
tests/oidc_peer.py): a person the provider knows lands signed in where they were going,
as the account with their verified email (made on their first sign-in, without a usable
password); an unverified email, an email two accounts share or a locally deactivated
account is refused; with no provider configured nothing of this exists and local
accounts sign in as before."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.oidc_peer import Provider, through_provider
from tests.sign_in_helpers import clean_addresses  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("clean_addresses")]


def signed_in_as(client: Client) -> str | None:
    user_id = client.session.get("_auth_user_id")
    return User.objects.get(pk=user_id).get_username() if user_id else None


def test_first_sign_in_makes_the_account_and_lands_on_the_designer(
        product_uses: Provider) -> None:
    product_uses.person("dana", password="dana-corp-pw", email="Dana@Example.com",
                        groups=[])
    client = Client()
    answer = through_provider(client, "dana", "dana-corp-pw")
    assert answer.status_code == 302 and answer["Location"] == "/designer/"
    dana = User.objects.get(email="dana@example.com")
    assert dana.username == "dana@example.com" and not dana.has_usable_password()
    assert signed_in_as(client) == "dana@example.com"
    assert client.get("/designer/").status_code == 200


def test_it_goes_on_to_next_and_matches_the_existing_account_by_email(
        product_uses: Provider) -> None:
    alice = User.objects.create_user("alice", email="alice@example.com", password="local-pw")
    product_uses.person("alice.corp", password="alice-corp-pw", email="ALICE@example.com")
    client = Client()
    answer = through_provider(client, "alice.corp", "alice-corp-pw",
                              next_path="/approvals/")
    assert answer["Location"] == "/approvals/"
    assert signed_in_as(client) == "alice"
    assert User.objects.filter(email__iexact="alice@example.com").count() == 1
    alice.refresh_from_db()
    assert alice.check_password("local-pw")  # her local sign-in keeps working


@pytest.mark.allow_output  # the refusal is logged, and counted by django-axes
@pytest.mark.parametrize("case", ["unverified email", "two accounts share it",
                                  "deactivated here"])
def test_refused_sign_ins_sign_nobody_in(product_uses: Provider, case: str,
                                        caplog: pytest.LogCaptureFixture) -> None:
    product_uses.person("erin", password="erin-corp-pw", email="erin@example.com",
                        email_verified=case != "unverified email")
    if case == "two accounts share it":
        User.objects.create_user("erin1", email="erin@example.com")
        User.objects.create_user("erin2", email="Erin@example.com")
    if case == "deactivated here":
        User.objects.create_user("erin", email="erin@example.com", is_active=False)
    client = Client()
    answer = through_provider(client, "erin", "erin-corp-pw")
    assert answer.status_code == 302 and answer["Location"] == "/?provider=refused"
    assert signed_in_as(client) is None
    page = client.get(answer["Location"])
    assert b"Sign-in with Example Corp was refused" in page.content
    assert User.objects.filter(email__iexact="erin@example.com", is_active=True).count() \
        == (2 if case == "two accounts share it" else 0)
    # Logged for the operator (why), and counted as a failed sign-in (django-axes).
    logged = caplog.text
    assert "New login failure" in logged
    assert ("is deactivated" if case == "deactivated here"
            else "failed to get or create user") in logged


def test_a_session_ends_when_the_account_is_deactivated(product_uses: Provider) -> None:
    product_uses.person("finn", password="finn-corp-pw", email="finn@example.com")
    client = Client()
    through_provider(client, "finn", "finn-corp-pw")
    assert client.get("/designer/").status_code == 200
    User.objects.filter(email="finn@example.com").update(is_active=False)
    assert client.get("/designer/").status_code == 302  # to the sign-in


def test_the_session_lasts_the_configured_hours(product_uses: Provider,
                                                settings: Any) -> None:
    settings.KIONGA_OIDC_SESSION_HOURS = 3
    product_uses.person("gail", password="gail-corp-pw", email="gail@example.com")
    client = Client()
    through_provider(client, "gail", "gail-corp-pw")
    assert client.session.get_expiry_age() == 3 * 3600


@pytest.mark.parametrize("page", ["/", "/designer/login/", "/approvals/sign-in/",
                                  "/admin/login/?next=/admin/"])
def test_every_sign_in_page_offers_the_provider(product_uses: Provider, page: str) -> None:
    html = Client().get(page).content.decode()
    assert "Sign in with Example Corp" in html and "/oidc/authenticate/" in html


def test_without_a_provider_nothing_of_it_exists(db: None) -> None:
    User.objects.create_user("hank", password="hank-local-pw")
    client = Client()
    assert "Sign in with" not in client.get("/").content.decode()
    assert client.get("/oidc/authenticate/").status_code == 404
    assert client.get("/oidc/callback/?code=x&state=y").status_code == 404
    answer = client.post("/", {"username": "hank", "password": "hank-local-pw"})
    assert answer.status_code == 302 and signed_in_as(client) == "hank"


@pytest.mark.allow_output  # the operator's log says why
def test_an_unreachable_provider_is_a_clear_page_not_an_error(
        product_uses: Provider, settings: Any, caplog: pytest.LogCaptureFixture) -> None:
    from kionga import oidc

    settings.KIONGA_OIDC_ISSUER = "http://127.0.0.1:9/o"  # nothing listens there
    oidc.forget_discovery()
    answer = Client().get("/oidc/authenticate/")
    assert answer.status_code == 503
    assert b"Example Corp cannot be reached" in answer.content
    assert "http://127.0.0.1:9/o/.well-known/openid-configuration" in caplog.text


def test_an_invited_account_is_activated_by_the_provider(product_uses: Provider) -> None:
    from kionga.models import InvitedAccount

    waiting = User(username="omar@example.com", email="omar@example.com", is_active=False)
    waiting.set_unusable_password()
    waiting.save()
    InvitedAccount.objects.create(user=waiting)
    product_uses.person("omar", password="omar-corp-pw", email="omar@example.com")
    client = Client()
    assert through_provider(client, "omar", "omar-corp-pw")["Location"] == "/designer/"
    waiting.refresh_from_db()
    assert waiting.is_active and signed_in_as(client) == "omar@example.com"
    assert not InvitedAccount.objects.filter(user=waiting).exists()


def test_an_issuer_without_its_client_fails_the_check(settings: Any) -> None:
    from django.core.management import call_command
    from django.core.management.base import SystemCheckError

    settings.KIONGA_OIDC_ISSUER = "https://login.example.com/o"
    settings.OIDC_RP_CLIENT_SECRET = ""
    with pytest.raises(SystemCheckError, match="KIONGA_OIDC_CLIENT_ID and"):
        call_command("check")


@pytest.mark.allow_output  # the refusal is logged, and counted by django-axes
@pytest.mark.parametrize(("setting", "value", "logged"), [
    ("OIDC_RP_SIGN_ALGO", "HS256", "does not match the client's OIDC_RP_SIGN_ALGO"),
    ("OIDC_RP_CLIENT_SECRET", "not-the-secret", "Get Token Error"),
])
def test_a_token_that_does_not_verify_signs_nobody_in(
        product_uses: Provider, settings: Any, caplog: pytest.LogCaptureFixture,
        setting: str, value: str, logged: str) -> None:
    product_uses.person("pia", password="pia-corp-pw", email="pia@example.com")
    setattr(settings, setting, value)
    client = Client()
    answer = through_provider(client, "pia", "pia-corp-pw")
    assert answer.status_code == 302 and answer["Location"] == "/?provider=refused"
    assert signed_in_as(client) is None and not User.objects.filter(
        email="pia@example.com").exists()
    assert logged in caplog.text
