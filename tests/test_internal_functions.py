"""POST functions/{name}/invoke: built-in tools, else the project's Function webhook."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.resource_models import Function
from tests.conftest import Api
from tests.internal_helpers import (
    BASE,
    closed_port_url,
    json_answer,
    run_client,
    start_run,
    upstream,
)

pytestmark = pytest.mark.urls("kionga.internal_urls")

SECRET = "fn-secret-0123456789abcdef"




def invoke(credential: str, name: str, value: object) -> Any:
    return run_client(credential).post(BASE + f"functions/{name}/invoke", {"input": value})


def webhook(project: Project, url: str, key: str = "lookup") -> Function:
    return Function.objects.create(project=project, key=key, url=url + "/hook", secret=SECRET)


def test_it_runs_a_builtin_tool(carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    response = invoke(raw, "word_count", "three little words")
    assert response.status_code == 200, response.content
    assert response.json() == {"output": {"words": 3, "characters": 18}}


def test_it_calls_the_webhook_with_its_secret(carol: User, acme: Project) -> None:
    with upstream(lambda *_: json_answer(200, {"found": [1, 2]})) as (url, seen):
        webhook(acme, url)
        _, raw = start_run(carol, acme)
        response = invoke(raw, "lookup", {"q": "x"})
    assert response.json() == {"output": {"found": [1, 2]}}
    [call] = seen
    assert (call["method"], call["path"]) == ("POST", "/hook")
    assert call["headers"]["authorization"] == f"Bearer {SECRET}"
    assert json.loads(call["body"]) == {"input": {"q": "x"}}


def test_it_passes_a_text_answer_as_text(carol: User, acme: Project) -> None:
    with upstream(lambda *_: (200, "text/plain", b"plain words")) as (url, _):
        webhook(acme, url)
        _, raw = start_run(carol, acme)
        assert invoke(raw, "lookup", "q").json() == {"output": "plain words"}


def test_it_denies_another_projects_function_like_a_missing_one(
    api: Api, carol: User, acme: Project, evil: Project
) -> None:
    webhook(evil, "http://127.0.0.1:9", key="theirs")
    _, raw = start_run(carol, acme)
    other = api.assert_error(invoke(raw, "theirs", 1), 404, "resource_denied")
    missing = api.assert_error(invoke(raw, "nowhere", 1), 404, "resource_denied")
    assert other["message"].replace("theirs", "X") == missing["message"].replace("nowhere", "X")


def test_it_rejects_a_body_that_is_not_an_object(api: Api, carol: User, acme: Project) -> None:
    _, raw = start_run(carol, acme)
    response = run_client(raw).post(BASE + "functions/word_count/invoke", [1], format="json")
    api.assert_error(response, 400, "invalid_request")


@pytest.mark.allow_output  # upstream failures are logged
@pytest.mark.parametrize("status,expected,code", [
    (500, 502, "resource_unavailable"), (429, 503, "resource_unavailable"),
    (404, 422, "upstream_rejected"), (302, 422, "upstream_rejected"),
])
def test_it_maps_webhook_failures(
    api: Api, carol: User, acme: Project, status: int, expected: int, code: str
) -> None:
    with upstream(lambda *_: json_answer(status, {"error": "nope"})) as (url, _):
        webhook(acme, url)
        _, raw = start_run(carol, acme)
        api.assert_error(invoke(raw, "lookup", 1), expected, code)


@pytest.mark.allow_output
def test_it_maps_an_unreachable_webhook(api: Api, carol: User, acme: Project) -> None:
    webhook(acme, closed_port_url())
    _, raw = start_run(carol, acme)
    api.assert_error(invoke(raw, "lookup", 1), 503, "resource_unavailable")
