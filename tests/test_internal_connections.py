"""POST agent-api-connections/{id}/invoke: allowed methods, paths below the base URL,
secret headers sent by the gateway, the upstream's status and body passed back."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga.models import Project
from kionga.resource_models import ApiConnection
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

SECRET = "conn-secret-0123456789abcdef"




def connection(project: Project, url: str, methods: list[str] | None = None,
               key: str = "tickets") -> ApiConnection:
    return ApiConnection.objects.create(
        project=project, key=key, base_url=url + "/api", allowed_methods=methods or [],
        secret_headers={"Authorization": f"Bearer {SECRET}", "X-Team": "blue"},
    )


def call(credential: str, method: str, path: str, body: object = None,
         key: str = "tickets") -> Any:
    return run_client(credential).post(BASE + f"agent-api-connections/{key}/invoke",
                                       {"method": method, "path": path, "body": body})


def echo(method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, str, bytes]:
    return json_answer(201, {"method": method, "path": path,
                             "got": json.loads(body) if body else None})


def test_it_sends_the_call_with_the_secret_headers(carol: User, acme: Project) -> None:
    with upstream(echo) as (url, seen):
        connection(acme, url)
        _, raw = start_run(carol, acme)
        response = call(raw, "POST", "/tickets?x=1", {"title": "hi"})
    assert response.status_code == 200, response.content
    assert response.json() == {"status": 201, "body": {
        "method": "POST", "path": "/api/tickets?x=1", "got": {"title": "hi"}}}
    [sent] = seen
    assert sent["headers"]["authorization"] == f"Bearer {SECRET}"
    assert sent["headers"]["x-team"] == "blue"


def test_it_sends_text_as_text(carol: User, acme: Project) -> None:
    with upstream(lambda *_: (200, "text/plain", b"ok")) as (url, seen):
        connection(acme, url)
        _, raw = start_run(carol, acme)
        response = call(raw, "POST", "/notes", "just text")
    assert response.json() == {"status": 200, "body": "ok"}
    assert seen[0]["body"] == b"just text"
    assert seen[0]["headers"]["content-type"].startswith("text/plain")


def test_it_passes_upstream_errors_back_as_answers(carol: User, acme: Project) -> None:
    with upstream(lambda *_: json_answer(404, {"detail": "no ticket"})) as (url, _):
        connection(acme, url)
        _, raw = start_run(carol, acme)
        response = call(raw, "GET", "/tickets/9")
    assert response.json() == {"status": 404, "body": {"detail": "no ticket"}}


def test_it_allows_get_and_post_when_no_methods_are_listed(
    api: Api, carol: User, acme: Project
) -> None:
    with upstream(echo) as (url, _):
        connection(acme, url)
        _, raw = start_run(carol, acme)
        assert call(raw, "GET", "/a").json()["status"] == 201
        assert call(raw, "post", "/a").json()["status"] == 201
        api.assert_error(call(raw, "DELETE", "/a"), 403, "resource_denied")


def test_it_allows_only_the_listed_methods(api: Api, carol: User, acme: Project) -> None:
    with upstream(echo) as (url, seen):
        connection(acme, url, methods=["GET"])
        _, raw = start_run(carol, acme)
        api.assert_error(call(raw, "POST", "/a", {}), 403, "resource_denied")
        assert call(raw, "GET", "/a").json()["status"] == 201
    assert [s["method"] for s in seen] == ["GET"]


@pytest.mark.parametrize("path", ["/../admin", "/a/%2e%2e/b", "//evil.example/x", "/a\\b",
                                  "/a/..", "/x\r\nHost: evil"])
def test_it_refuses_paths_that_escape_the_base_url(
    api: Api, carol: User, acme: Project, path: str
) -> None:
    with upstream(echo) as (url, seen):
        connection(acme, url)
        _, raw = start_run(carol, acme)
        api.assert_error(call(raw, "GET", path), 403, "resource_denied")
    assert seen == []


@pytest.mark.parametrize("path", ["tickets", "http://evil.example/x", "", None, 7])
def test_it_refuses_paths_without_leading_slash(
    api: Api, carol: User, acme: Project, path: object
) -> None:
    connection(acme, "http://127.0.0.1:9")
    _, raw = start_run(carol, acme)
    api.assert_error(call(raw, "GET", path), 400, "invalid_request")  # type: ignore[arg-type]


def test_it_refuses_unknown_methods(api: Api, carol: User, acme: Project) -> None:
    connection(acme, "http://127.0.0.1:9", methods=["TRACE"])
    _, raw = start_run(carol, acme)
    api.assert_error(call(raw, "TRACE", "/a"), 400, "invalid_request")


def test_it_denies_another_projects_connection_like_a_missing_one(
    api: Api, carol: User, acme: Project, evil: Project
) -> None:
    connection(evil, "http://127.0.0.1:9", key="theirs")
    _, raw = start_run(carol, acme)
    other = api.assert_error(call(raw, "GET", "/", key="theirs"), 404, "resource_denied")
    missing = api.assert_error(call(raw, "GET", "/", key="nowhere"), 404, "resource_denied")
    assert other["message"].replace("theirs", "X") == missing["message"].replace("nowhere", "X")


@pytest.mark.allow_output  # the failure is logged
def test_it_maps_an_unreachable_api(api: Api, carol: User, acme: Project) -> None:
    connection(acme, closed_port_url())
    _, raw = start_run(carol, acme)
    api.assert_error(call(raw, "GET", "/a"), 503, "resource_unavailable")
