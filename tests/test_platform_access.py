"""Project access checks (kionga.access): another tenant's project is a 404, never a 403."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import AnonymousUser, User

from kionga.access import ROLE_RANK, check_project_access, projects_of
from kionga.errors import APIError
from kionga.models import Project


def test_it_lets_a_member_with_enough_role_in(alice: User, acme: Project) -> None:
    assert check_project_access(alice, acme.pk, "admin") == acme


def test_it_accepts_the_id_as_string(bob: User, acme: Project) -> None:
    assert check_project_access(bob, str(acme.pk)) == acme


def test_it_hides_another_tenants_project(mallory: User, acme: Project) -> None:
    with pytest.raises(APIError) as caught:
        check_project_access(mallory, acme.pk)
    assert (caught.value.status_code, caught.value.code) == (404, "not_found")


def test_it_hides_a_project_from_a_user_without_any(charlie: User, acme: Project) -> None:
    with pytest.raises(APIError) as caught:
        check_project_access(charlie, acme.pk)
    assert caught.value.code == "not_found"


def test_it_hides_projects_from_anonymous(acme: Project) -> None:
    with pytest.raises(APIError) as caught:
        check_project_access(AnonymousUser(), acme.pk)
    assert caught.value.code == "not_found"


@pytest.mark.parametrize("bad_id", ["abc", "", "1.5", None, True, [1], "9" * 30])
def test_it_treats_a_malformed_id_as_not_found(alice: User, bad_id: object) -> None:
    with pytest.raises(APIError) as caught:
        check_project_access(alice, bad_id)
    assert caught.value.code == "not_found"


def test_it_forbids_a_member_whose_role_is_too_low(bob: User, carol: User, acme: Project) -> None:
    with pytest.raises(APIError) as caught:
        check_project_access(bob, acme.pk, "editor")
    assert (caught.value.status_code, caught.value.code) == (403, "forbidden")
    assert check_project_access(carol, acme.pk, "editor") == acme


def test_it_ranks_roles() -> None:
    assert ROLE_RANK["viewer"] < ROLE_RANK["editor"] < ROLE_RANK["admin"]


def test_it_lists_projects_by_minimum_role(
    alice: User, bob: User, mallory: User, acme: Project, evil: Project
) -> None:
    assert list(projects_of(bob)) == [acme]
    assert list(projects_of(bob, "editor")) == []
    assert list(projects_of(alice, "admin")) == [acme]
    assert list(projects_of(AnonymousUser())) == []


def test_it_refuses_an_unknown_role_name(alice: User, acme: Project) -> None:
    with pytest.raises(ValueError):
        check_project_access(alice, acme.pk, "owner")
