"""``manage.py bootstrap --project SLUG --user NAME --role ROLE --json``."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command
from django.test import Client

from kionga.models import Membership, Project
from tests.conftest import Api

pytestmark = pytest.mark.django_db


def bootstrap(*args: str) -> str:
    out = StringIO()
    call_command("bootstrap", *args, stdout=out)
    return out.getvalue()


def bootstrap_json(project: str = "demo", user: str = "dana", role: str = "admin") -> Any:
    out = bootstrap("--project", project, "--user", user, "--role", role, "--json")
    return json.loads(out)


def test_it_prints_one_json_object() -> None:
    result = bootstrap_json()
    assert set(result) == {"project_id", "user", "token", "password", "sign_in_url"}
    assert result["user"] == "dana"
    assert result["project_id"] == Project.objects.get(slug="demo").pk


def test_it_is_idempotent() -> None:
    first, second = bootstrap_json(), bootstrap_json()
    assert first["project_id"] == second["project_id"]
    assert Project.objects.count() == 1
    assert User.objects.filter(username="dana").count() == 1
    assert Membership.objects.count() == 1


def test_it_issues_a_new_working_token_each_time(api: Api) -> None:
    tokens = [bootstrap_json()["token"], bootstrap_json()["token"]]
    assert tokens[0] != tokens[1]
    for token in tokens:
        client = api.anon()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        response = client.get("/api/v1/me")
        assert response.status_code == 200
        assert response.json()["projects"][0]["role"] == "admin"


def test_it_updates_the_role_on_repeat() -> None:
    bootstrap_json(role="admin")
    bootstrap_json(role="viewer")
    assert Membership.objects.get().role == "viewer"


def test_it_adds_another_member_to_the_same_project() -> None:
    first = bootstrap_json(user="dana")
    second = bootstrap_json(user="eve", role="editor")
    assert first["project_id"] == second["project_id"]
    assert Membership.objects.filter(project_id=first["project_id"]).count() == 2


def test_it_prints_a_human_line_without_json() -> None:
    out = bootstrap("--project", "demo", "--user", "dana", "--role", "editor")
    assert "dana is editor of project demo" in out
    assert "kio_" in out


def test_it_refuses_an_unknown_role() -> None:
    with pytest.raises(CommandError, match="--role"):
        bootstrap_json(role="owner")
    assert Project.objects.count() == 0


def test_it_refuses_a_project_that_is_not_a_slug() -> None:
    with pytest.raises(CommandError, match="--project"):
        bootstrap_json(project="Not A Slug")


def test_it_prints_a_usable_sign_in_once() -> None:
    first = bootstrap_json()
    assert first["sign_in_url"] == "http://127.0.0.1:8000/"
    answer = Client().post("/", {"username": "dana", "password": first["password"]})
    assert answer.status_code == 302 and answer["Location"] == "/designer/"
    # The person keeps that password: a repeat does not change or show it again.
    assert bootstrap_json()["password"] is None
    assert User.objects.get(username="dana").check_password(first["password"])


def test_its_text_says_how_to_sign_in() -> None:
    said = bootstrap("--project", "demo", "--user", "dana", "--role", "editor")
    password = said.split("password: ")[1].split()[0]
    assert "sign in at http://127.0.0.1:8000/ as dana with password:" in said
    assert User.objects.get(username="dana").check_password(password)
    assert "existing password" in bootstrap("--project", "demo", "--user", "dana",
                                            "--role", "editor")
