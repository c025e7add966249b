"""After a sign-in — the designer's, the approver UI's, the admin's or the landing page's —
a person lands where they were going (``next``, when it is a safe same-host URL), else
on the designer (the approver UI's own sign-in: on its list; the admin's form carries
next=/admin/ itself). Never on /accounts/profile/ (a 404), never on another host."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

# Sign-in page, and where it sends people who came without (a safe) next.
PAGES = [("/designer/login/", "/designer/"), ("/approvals/sign-in/", "/approvals/"),
         ("/admin/login/", "/designer/"), ("/", "/designer/")]
UNSAFE = ["https://evil.example/x", "//evil.example/x", "http://testserver.evil.example/",
          "javascript:alert(1)", "https:///evil.example/"]


@pytest.fixture
def ops(db: None, settings: Any) -> User:
    """Ops staff with a password: the admin's login refuses people who are not staff.
    A fast hasher: this file signs in some fifty times."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return User.objects.create_user("ops", password="ops-password", is_staff=True)


def sign_in(page: str, next_url: str | None) -> Any:
    form = {"username": "ops", "password": "ops-password"}
    if next_url is not None:
        form["next"] = next_url
    return Client().post(page, form)


@pytest.mark.parametrize(("page", "home"), PAGES)
def test_without_next_it_lands_on_the_pages_home(ops: User, page: str, home: str) -> None:
    response = sign_in(page, None)
    assert response.status_code == 302, response.content
    assert response["Location"] == home


@pytest.mark.parametrize(("page", "home"), PAGES)
def test_it_lands_where_the_person_was_going(ops: User, page: str, home: str) -> None:
    for going in ("/approvals/?status=all", f"/designer/designs/{uuid.UUID(int=1)}/",
                  "/api/docs/", "/"):
        response = sign_in(page, going)
        assert (response.status_code, response["Location"]) == (302, going)


@pytest.mark.parametrize(("page", "home"), PAGES)
@pytest.mark.parametrize("going", UNSAFE)
def test_it_never_follows_next_to_another_host(ops: User, page: str, home: str,
                                               going: str) -> None:
    response = sign_in(page, going)
    assert (response.status_code, response["Location"]) == (302, home)


def test_a_signed_in_person_opening_the_designer_login_goes_on(alice: User) -> None:
    client = Client()
    client.force_login(alice)
    response = client.get("/designer/login/?next=/approvals/")
    assert (response.status_code, response["Location"]) == (302, "/approvals/")
    assert client.get("/designer/login/")["Location"] == "/designer/"


def test_the_sign_in_forms_carry_next_on(db: None) -> None:
    for page, _ in PAGES:
        html = Client().get(page + "?next=/approvals/").content.decode()
        assert 'name="next" value="/approvals/"' in html, page
    # Opened directly, the admin's form goes back to the admin.
    assert 'name="next" value="/admin/"' in Client().get("/admin/login/").content.decode()
