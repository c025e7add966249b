"""A secret never follows a changed destination: when a resource's URL changes scheme,
host or port, its secret is cleared unless the same request sends it again; audited."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from kionga.models import AuditEvent, Project
from kionga.resource_models import ApiConnection, Function, ModelEndpoint, moved
from tests.conftest import Api
from tests.projects_helpers import resources_url


@pytest.mark.parametrize(("old", "new", "expected"), [
    ("https://a.example/v1", "https://a.example/v2?x=1", False),
    ("https://a.example/v1", "https://A.EXAMPLE:443/v1", False),
    ("http://a.example/v1", "http://a.example:80/", False),
    ("https://a.example/v1", "http://a.example/v1", True),
    ("https://a.example/v1", "https://b.example/v1", True),
    ("https://a.example/v1", "https://a.example:8443/v1", True),
    ("https://a.example/v1", "https://a.example.evil.example/v1", True),
])
def test_moved_compares_scheme_host_and_port(old: str, new: str, expected: bool) -> None:
    assert moved(old, new) is expected


def patch(api: Api, user: User, project: Project, kind: str, key: str,
          body: dict[str, Any]) -> Any:
    answer = api.client_for(user).patch(f"{resources_url(project, kind)}/{key}", body,
                                        format="json")
    assert answer.status_code == 200, answer.content
    return answer.json()


def cleared_events(key: str) -> list[AuditEvent]:
    return list(AuditEvent.objects.filter(action="resource.secret_cleared", target_id=key))


def test_a_new_host_clears_the_model_secret(api: Api, alice: User, acme: Project) -> None:
    ModelEndpoint.objects.create(project=acme, key="m", base_url="https://llm.example.com/v1",
                                 model_name="x", secret="sk-old")
    answer = patch(api, alice, acme, "model", "m", {"base_url": "https://other.example.com/v1"})
    assert answer["secret_set"] is False
    assert ModelEndpoint.objects.get(key="m").secret == ""
    (event,) = cleared_events("m")
    assert event.actor == alice and event.target_type == "model"
    assert event.details == {"fields": ["secret"], "reason": "destination_changed"}
    assert "sk-old" not in str(event.details)


def test_a_secret_sent_with_the_move_is_kept(api: Api, alice: User, acme: Project) -> None:
    Function.objects.create(project=acme, key="f", url="https://hooks.example.com/f",
                            secret="s-old")
    answer = patch(api, alice, acme, "function", "f",
                   {"url": "http://hooks.example.com/f", "secret": "s-new"})
    assert answer["secret_set"] is True
    assert Function.objects.get(key="f").secret == "s-new"
    assert cleared_events("f") == []


def test_the_same_secret_sent_again_is_kept(api: Api, alice: User, acme: Project) -> None:
    Function.objects.create(project=acme, key="f", url="https://hooks.example.com/f",
                            secret="s-old")
    patch(api, alice, acme, "function", "f",
          {"url": "https://hooks.example.com:8443/f", "secret": "s-old"})
    assert Function.objects.get(key="f").secret == "s-old"
    assert cleared_events("f") == []


def test_a_new_path_on_the_same_host_keeps_it(api: Api, alice: User, acme: Project) -> None:
    Function.objects.create(project=acme, key="f", url="https://hooks.example.com/f",
                            secret="s-old")
    patch(api, alice, acme, "function", "f", {"url": "https://hooks.example.com/g"})
    assert Function.objects.get(key="f").secret == "s-old"
    assert cleared_events("f") == []


def test_a_new_port_clears_the_connection_headers(api: Api, alice: User,
                                                  acme: Project) -> None:
    ApiConnection.objects.create(project=acme, key="c", base_url="https://crm.example.com",
                                 secret_headers={"Authorization": "Bearer old"})
    answer = patch(api, alice, acme, "connection", "c",
                   {"base_url": "https://crm.example.com:8443", "name": "CRM"})
    assert answer["secret_header_names"] == []
    assert answer["name"] == "CRM"
    assert ApiConnection.objects.get(key="c").secret_headers == {}
    (event,) = cleared_events("c")
    assert event.details["fields"] == ["secret_headers"]
    assert AuditEvent.objects.get(action="resource.changed", target_id="c").details == {
        "fields": ["base_url", "name"]}


def test_a_move_without_a_secret_records_nothing_cleared(api: Api, alice: User,
                                                          acme: Project) -> None:
    Function.objects.create(project=acme, key="f", url="https://hooks.example.com/f")
    patch(api, alice, acme, "function", "f", {"url": "https://other.example.com/f"})
    assert cleared_events("f") == []
